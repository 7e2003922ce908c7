import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { verifyIndex } from '../merge/verify.js';
import { writeManifest } from '../merge/manifest.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-verify-'));
const good = join(work, 'good');
afterAll(() => rmSync(work, { recursive: true, force: true }));
beforeAll(async () => {
  await buildIndex({ input: 'corpus-samples', output: good, sorter: 'cpu', workers: 1 });
});

let n = 0;
function copy(): string {
  const dir = join(work, `copy-${n++}`);
  cpSync(good, dir, { recursive: true });
  return dir;
}

describe('gpuindex verify', () => {
  it('accepts a complete index', () => {
    // 138 Moby-Dick documents, the README, and the 7 pages of postgresql-docs/postgresql-15-docs.warc.gz
    expect(verifyIndex(good)).toMatchObject({ files: 4, documents: 146 });
  });

  it('catches any byte flipped at random in any file', () => {
    fc.assert(
      fc.property(fc.constantFrom('postings.bin', 'index.sqlite', 'impacts.bin', 'lexicon.bin'), fc.nat(), fc.integer({ min: 1, max: 255 }), (file, at, xor) => {
        const dir = copy();
        const path = join(dir, file);
        const bytes = readFileSync(path);
        const pos = at % bytes.length;
        bytes[pos] = bytes[pos]! ^ xor;
        writeFileSync(path, bytes);
        expect(() => verifyIndex(dir)).toThrow(new RegExp(`^${file.replace('.', '\\.')}: checksum mismatch`));
        rmSync(dir, { recursive: true });
      }),
      { numRuns: 30 },
    );
  });

  it('catches an impacts.bin that disagrees with the postings even when the checksums were recomputed', () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 255 }), (at, add) => {
        const dir = copy();
        const path = join(dir, 'impacts.bin');
        const bytes = readFileSync(path);
        // Four bytes past the 32-byte header, changed (read as a u32): a varint of the body or several.
        const words = (bytes.length - 32) / 4;
        const pos = 32 + 4 * (at % words);
        bytes.writeUInt32LE((bytes.readUInt32LE(pos) + add) >>> 0, pos);
        writeFileSync(path, bytes);
        writeManifest(dir, ['index.sqlite', 'postings.bin'], 1);
        expect(() => verifyIndex(dir)).toThrow(/^impacts\.bin/);
        rmSync(dir, { recursive: true });
      }),
      { numRuns: 20 },
    );
  });

  it('catches damaged postings even when the checksums were recomputed (consistency checks)', () => {
    const dir = copy();
    const path = join(dir, 'postings.bin');
    const bytes = readFileSync(path);
    writeFileSync(path, Buffer.concat([bytes, Buffer.from([1, 2, 3])])); // trailing garbage
    writeManifest(dir, ['index.sqlite', 'postings.bin'], 1);
    expect(() => verifyIndex(dir)).toThrow(/^postings\.bin: 3 bytes after the last list$/);
    const dir2 = copy();
    const p2 = join(dir2, 'postings.bin');
    const b2 = readFileSync(p2);
    b2[8] = 0x00; // the first list's first docID gap becomes 0 (a repeated docID) or shrinks
    b2[9] = 0x00;
    writeFileSync(p2, b2);
    writeManifest(dir2, ['index.sqlite', 'postings.bin'], 1);
    expect(() => verifyIndex(dir2)).toThrow(/^term ".+" \(termID \d+\): /);
  });

  it('exits 3 with one precise line from the CLI, and refuses a folder without a manifest', () => {
    const dir = copy();
    rmSync(join(dir, 'MANIFEST.json'));
    const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
    const r = spawnSync(process.execPath, [cli, 'verify', dir], { encoding: 'utf8' });
    expect(r.status).toBe(3);
    expect(r.stderr).toBe(`gpuindex: ${dir}: MANIFEST.json is missing: not a complete gpuindex index\n`);
  });

  it('a damaged index.sqlite or a cut postings.bin makes search and postings fail in one line, not an internal error', () => {
    const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
    const dir = copy();
    const db = join(dir, 'index.sqlite');
    const bytes = readFileSync(db);
    bytes[0] = bytes[0]! ^ 0x01; // "SQLite format 3" header: not a database any more
    writeFileSync(db, bytes);
    for (const args of [['search', dir, 'whale'], ['postings', dir, 'whale'], ['stats', dir]]) {
      const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(`gpuindex: ${db}: damaged (file is not a database); run \`gpuindex verify\` on the index\n`);
    }
    const dir2 = copy();
    const postings = join(dir2, 'postings.bin');
    writeFileSync(postings, readFileSync(postings).subarray(0, 64));
    const r = spawnSync(process.execPath, [cli, 'search', dir2, 'whale'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`gpuindex: ${dir2}: postings.bin is shorter than the lexicon says\n`);
  });
});
