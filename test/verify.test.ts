import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { verifyIndex } from '../merge/verify.js';
import { writeManifest } from '../merge/manifest.js';
import { openWriter } from '../src/writer.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-verify-'));
const good = join(work, 'good');
const live = join(work, 'live');
afterAll(() => rmSync(work, { recursive: true, force: true }));
beforeAll(async () => {
  await buildIndex({ input: 'corpus-samples', output: good, sorter: 'cpu', workers: 1 });
  // Two segments at generation 2: seg-0000 (d0, d1) with d0 deleted (deletes-2-1.bin), seg-0001 (d2).
  const writer = await openWriter(live, { stem: 'none', stopwords: 'none', sorter: 'cpu', refreshMs: 0, mergePolicy: false });
  await writer.add([{ id: 'd0', text: 'whale ship' }, { id: 'd1', text: 'sea' }]);
  await writer.commit();
  await writer.add([{ id: 'd2', text: 'white whale sea' }]);
  await writer.delete(['d0']);
  await writer.close();
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

describe('gpuindex verify of segments.json', () => {
  type Json = Record<string, any>;
  /** A copy of the live index with its segments.json changed by `damage`. */
  function damaged(damage: (m: Json) => void): string {
    const dir = join(work, `live-${n++}`);
    cpSync(live, dir, { recursive: true });
    const path = join(dir, 'segments.json');
    const m = JSON.parse(readFileSync(path, 'utf8')) as Json;
    damage(m);
    writeFileSync(path, JSON.stringify(m, null, 2));
    return dir;
  }
  const failure = (dir: string) => {
    try {
      verifyIndex(dir);
    } catch (err) {
      return (err as Error).message;
    }
    return 'ok';
  };

  it('accepts the live index the writer made', () => {
    expect(readFileSync(join(live, 'segments.json'), 'utf8')).toContain('"deletes": "deletes-2-1.bin"');
    expect(verifyIndex(live)).toMatchObject({ segments: 2, documents: 3 });
  });

  it('names the field of a damaged segments.json in one line', () => {
    const cases: [string, (m: Json) => void, string][] = [
      ['format', (m) => (m.format = 'gpuindex'), 'segments.json: format: "gpuindex", not "gpuindex-segments"'],
      ['formatVersion', (m) => (m.formatVersion = 2), 'segments.json: formatVersion: segments format 2, this gpuindex reads 1'],
      ['formatVersion type', (m) => (m.formatVersion = '1'), 'segments.json: formatVersion: segments format "1", this gpuindex reads 1'],
      ['generation type', (m) => (m.generation = '2'), 'segments.json: generation: "2" is not a count (a whole number from 0)'],
      ['generation negative', (m) => (m.generation = -1), 'segments.json: generation: -1 is not a count (a whole number from 0)'],
      ['generation behind a deletes file', (m) => (m.generation = 1), 'segments.json: generation: 1, but segments[0].deletes is deletes-2-1.bin, written for generation 2'],
      ['commitId', (m) => (m.commitId = 5), "segments.json: commitId: 5 is not a commit's id"],
      ['walSeq', (m) => (m.walSeq = 1.5), 'segments.json: walSeq: 1.5 is not a count (a whole number from 0)'],
      ['segments', (m) => (m.segments = {}), 'segments.json: segments: {} is not a list'],
      ['an entry', (m) => (m.segments[1] = 'seg-0001'), 'segments.json: segments[1]: "seg-0001" is not an object'],
      ['documents type', (m) => (m.segments[1].documents = '1'), 'segments.json: segments[1].documents: "1" is not a count (a whole number from 0)'],
      ['postings missing', (m) => delete m.segments[0].postings, 'segments.json: segments[0].postings: undefined is not a count (a whole number from 0)'],
      ['name type', (m) => (m.segments[0].name = 7), 'segments.json: segments[0].name: 7 is not a folder name'],
      ['name outside', (m) => (m.segments[1].name = '../seg-0001'), 'segments.json: segments[1].name: "../seg-0001" is not a folder name'],
      ['name twice', (m) => (m.segments[1].name = 'seg-0000'), 'segments.json: segments[1].name: seg-0000 is listed twice'],
      ['name of no segment', (m) => (m.segments[1].name = 'seg-0009'), 'segments.json: segments[1].name: seg-0009 is missing'],
      ['documents', (m) => (m.segments[1].documents = 2), 'segments.json: segments[1].documents: 2, seg-0001 holds 1'],
      ['totalTokens', (m) => (m.segments[0].totalTokens = 99), 'segments.json: segments[0].totalTokens: 99, seg-0000 holds 3'],
      ['terms', (m) => (m.segments[1].terms = 2), 'segments.json: segments[1].terms: 2, seg-0001 holds 3'],
      ['deletes type', (m) => (m.segments[0].deletes = 1), 'segments.json: segments[0].deletes: 1 is not a file name'],
      ['deletes missing', (m) => (m.segments[0].deletes = 'deletes-1-1.bin'), 'segments.json: segments[0].deletes: seg-0000/deletes-1-1.bin is missing'],
      ['deleted', (m) => (m.segments[0].deleted = 2), 'segments.json: segments[0].deleted: 2, seg-0000/deletes-2-1.bin holds 1'],
      ['deleted without deletes', (m) => (m.segments[1].deleted = 1), 'segments.json: segments[1].deleted: 1, but segments[1].deletes names no file'],
      ['settings type', (m) => (m.settings = 'none'), 'segments.json: settings: "none" is not an object'],
      ['settings.tokenizer type', (m) => (m.settings.tokenizer = 'porter'), 'segments.json: settings.tokenizer: "porter" is not an object'],
      ['settings.positions type', (m) => (m.settings.positions = 'yes'), 'segments.json: settings.positions: "yes" is not true or false'],
      ['shards type', (m) => (m.shards = { count: 2 }), 'segments.json: shards: {"count":2} is not {count, listing, settings}'],
      [
        'settings.tokenizer disagrees',
        (m) => (m.settings.tokenizer.stem = 'porter'),
        'segments.json: settings.tokenizer: {"cjk":"unigram","stem":"porter","stopwords":"none","titleWeight":2}, seg-0000 was built with {"cjk":"unigram","stem":"none","stopwords":"none","titleWeight":2}',
      ],
      ['settings.fields disagrees', (m) => (m.settings.fields = { title: 'name' }), 'segments.json: settings.fields: {"title":"name"}, seg-0000 was built with null'],
      ['settings.positions disagrees', (m) => (m.settings.positions = true), 'segments.json: settings.positions: true, seg-0000 was built with false'],
    ];
    const found = cases.map(([what, damage]) => [what, failure(damaged(damage))]);
    expect(found).toEqual(cases.map(([what, , expected]) => [what, expected]));
    const cut = damaged(() => {});
    writeFileSync(join(cut, 'segments.json'), '{"format": "gpuindex-segments",');
    expect(failure(cut)).toMatch(/^segments\.json: not JSON \(.+\)$/);
  });

  it('exits 3 with the line from the CLI', () => {
    const dir = damaged((m) => (m.segments[0].totalTokens = '3'));
    const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
    const r = spawnSync(process.execPath, [cli, 'verify', dir], { encoding: 'utf8' });
    expect(r.status).toBe(3);
    expect(r.stderr).toBe(`gpuindex: ${dir}: segments.json: segments[0].totalTokens: "3" is not a count (a whole number from 0)\n`);
  });
});
