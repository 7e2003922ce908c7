/**
 * --gpu-sort bsn | radix | auto: whichever GPU sorting algorithm a build takes, it writes the
 * same runs and the same index, byte for byte (on the available adapter: lavapipe here).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makePairs } from '../gpu/distributions.js';
import { openGpuSortThread } from '../gpu/sort-thread.js';
import { hasGpu } from './helpers/gpu-available.js';

const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'gpuindex-gpu-sort-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function shared(pairs: Uint32Array): Uint32Array {
  const out = new Uint32Array(new SharedArrayBuffer(pairs.byteLength));
  out.set(pairs);
  return out;
}

describe.runIf(hasGpu())('the GPU sorting algorithms on the GPU thread', () => {
  it('write the same run files, with document bases and term keys, and auto settles on one', async () => {
    // Blocks as a build fills them: batch-local docIDs with bases, termIDs replaced by keys.
    const n = 20_000;
    const termKeys = Uint32Array.from({ length: 1 << 16 }, (_, t) => (t * 40503) & 0xffff);
    const blocks = (['zipf', 'few-terms', 'uniform'] as const).map((dist, k) => {
      const pairs = makePairs(dist, n, 11 + k);
      for (let i = 0; i < n; i++) {
        pairs[2 * i] = pairs[2 * i]! & 0xffff;
        pairs[2 * i + 1] = k === 2 ? pairs[2 * i + 1]! : i % 5000; // the last block's docIDs are not ascending
      }
      return pairs;
    });
    const docBases = Uint32Array.from([0, 0, 5000, 5000, 10_000, 10_000, 15_000, 15_000]);
    const hashes: Record<string, string[]> = {};
    for (const algorithm of ['bsn', 'radix', 'auto'] as const) {
      const sorter = await openGpuSortThread({ allowSoftware: true, algorithm });
      if (typeof sorter === 'string') throw new Error(sorter);
      try {
        expect(sorter.algorithm).toBe(algorithm);
        if (algorithm === 'auto') {
          expect(sorter.hostBytesPerPairOf!.radix).toBeGreaterThan(sorter.hostBytesPerPairOf!.bsn); // lavapipe: GPU memory is host memory
          expect(await sorter.choose('radix', n)).toEqual({ algorithm: 'radix' });
          expect(sorter.algorithm).toBe('radix');
          expect(sorter.hostBytesPerPair).toBe(sorter.hostBytesPerPairOf!.radix);
        }
        hashes[algorithm] = [];
        for (const [k, block] of blocks.entries()) {
          const path = join(work, `${algorithm}-${k}.run`);
          const done = await sorter.sortToRun(shared(block), n, docBases, { path, hash: true, keySpace: termKeys.length }, termKeys);
          expect(done.sha256).toBe(sha(path));
          hashes[algorithm]!.push(done.sha256!);
        }
      } finally {
        sorter.dispose();
      }
    }
    expect(hashes.radix).toEqual(hashes.bsn);
    expect(hashes.auto).toEqual(hashes.bsn);
    expect(new Set(hashes.bsn).size).toBe(3);
  });

  it('auto takes the network when told to, and closes the radix sorter', async () => {
    const sorter = await openGpuSortThread({ allowSoftware: true, algorithm: 'auto' });
    if (typeof sorter === 'string') throw new Error(sorter);
    try {
      expect(await sorter.choose('bsn', 1000)).toEqual({ algorithm: 'bsn' });
      expect(sorter.hostBytesPerPair).toBe(sorter.hostBytesPerPairOf!.bsn);
      const done = await sorter.sortToRun(shared(makePairs('zipf', 1000, 3)), 1000, undefined, { path: join(work, 'auto-bsn.run'), hash: true, keySpace: 0xffffffff });
      expect(done.runBytes).toBeGreaterThan(0);
    } finally {
      sorter.dispose();
    }
  });
});

function build(out: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [cli, 'build', 'corpus-samples/moby-dick', '-o', out, '--sorter', 'gpu', '--json', ...args], {
    encoding: 'utf8',
    env: { ...process.env, GPUINDEX_DEBUG: '', GPUINDEX_TEST_GPU: '{"acceptSoftware":true}' },
  });
  return { code: r.status, summary: r.status === 0 ? JSON.parse(r.stdout) : undefined, stderr: r.stderr };
}

describe('gpuindex bench --gpu-sort', () => {
  it('refuses an unknown algorithm in one line, before any build', () => {
    const r = spawnSync(process.execPath, [cli, 'bench', 'corpus-samples', '--gpu-sort', 'quick'], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toBe('gpuindex: --gpu-sort must be bsn, radix or auto, got "quick"\n');
  });
});

describe.runIf(hasGpu())('gpuindex build --gpu-sort', () => {
  it('bsn, radix and auto build the same index byte for byte; auto takes radix when the plan gives it the same block', () => {
    const files: Record<string, Record<string, string>> = {};
    for (const choice of ['bsn', 'radix', 'auto']) {
      const out = join(work, `index-${choice}`);
      const r = build(out, '--gpu-sort', choice, '--block-size', '3000');
      expect(r.code, r.stderr).toBe(0);
      expect(r.summary.sorter).toBe('gpu');
      expect(r.summary.blocks).toBeGreaterThan(3);
      // An explicit block size: the plan gives radix the same block, and lavapipe can allocate it.
      expect(r.summary.gpuSort).toBe(choice === 'auto' ? 'radix' : choice);
      files[choice] = Object.fromEntries(readdirSync(out).map((f) => [f, sha(join(out, f))]));
    }
    expect(Object.keys(files.bsn!).sort()).toEqual(['MANIFEST.json', 'impacts.bin', 'index.sqlite', 'lexicon.bin', 'postings.bin']);
    expect(files.radix).toEqual(files.bsn);
    expect(files.auto).toEqual(files.bsn);
  });

  it('auto keeps the network when the radix sort\'s buffers would shrink the block the memory plan gives', () => {
    // lavapipe's GPU memory is host memory: the radix sort's second block counts in --memory.
    const r = build(join(work, 'index-auto-memory'), '--gpu-sort', 'auto', '--memory', '480MiB');
    expect(r.code, r.stderr).toBe(0);
    expect(r.summary.gpuSort).toBe('bsn');
  });

  it('refuses an unknown algorithm in one line', () => {
    const r = build(join(work, 'index-bad'), '--gpu-sort', 'quick');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toBe('gpuindex: --gpu-sort must be bsn, radix or auto, got "quick"\n');
  });
});
