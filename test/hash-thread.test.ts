import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HashThread } from '../merge/hash-thread.js';

describe('HashThread (SHA-256 on a worker thread)', () => {
  it('hashes copied and handed-over chunks in order, more chunks than it lends at once; a chunk put back is not hashed', async () => {
    const thread = new HashThread(4096, 2);
    const expected = createHash('sha256');
    const header = Buffer.from('GPIXPST1');
    thread.updateCopy(header);
    expected.update(header);
    for (let i = 0; i < 25; i++) {
      const chunk = await thread.take(); // only 2 lent at once: waits for the thread from the 3rd on
      expect(chunk.length).toBe(4096);
      const n = 1 + ((i * 977) % 4096);
      for (let k = 0; k < n; k++) chunk[k] = (i * 31 + k) & 0xff;
      if (i === 7) {
        thread.putBack(chunk);
        continue;
      }
      expected.update(chunk.subarray(0, n));
      thread.give(chunk, n);
    }
    expect(await thread.digest()).toBe(expected.digest('hex'));
  });

  it('gives the digest of exactly what was handed over', async () => {
    const thread = new HashThread(1024, 3);
    const all: Buffer[] = [];
    for (let i = 0; i < 10; i++) {
      const chunk = await thread.take();
      chunk.fill(i + 1);
      const n = 100 * (i + 1);
      all.push(Buffer.from(chunk.subarray(0, n)));
      thread.give(chunk, n);
    }
    const small = Buffer.from('tail bytes');
    thread.updateCopy(small);
    all.push(small);
    expect(await thread.digest()).toBe(createHash('sha256').update(Buffer.concat(all)).digest('hex'));
  });
});

describe('PostingsFileWriter.appendFile', () => {
  it('copies a part unchanged and hashes the whole file, with or without a hash thread', async () => {
    const { mkdtempSync, readFileSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { PostingsFileWriter } = await import('../merge/postings-file.js');
    const { sha256OfFile } = await import('../merge/manifest.js');
    const dir = mkdtempSync(join(tmpdir(), 'gpuindex-append-'));
    try {
      const part = join(dir, 'part');
      const bytes = Buffer.alloc(3 << 20);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) & 0xff;
      writeFileSync(part, bytes); // three chunks of the hash thread's 1 MiB
      for (const hashThread of [false, true]) {
        const out = join(dir, `postings-${hashThread}.bin`);
        const w = new PostingsFileWriter(out, { hashThread });
        w.append(Uint32Array.of(1, 5), Uint32Array.of(2, 1), 2);
        const before = w.offset;
        expect(await w.appendFile(part)).toBe(3 << 20);
        expect(w.offset).toBe(before + (3 << 20));
        const sha = hashThread ? await w.closeAsync() : w.close();
        expect(sha).toBe(sha256OfFile(out));
        expect(readFileSync(out).subarray(before).equals(bytes)).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
