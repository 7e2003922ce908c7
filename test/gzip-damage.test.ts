import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, crc32, deflateRawSync, gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { readCorpusFile, type CorpusItem, type SkippedItem } from '../indexer/corpus/index.js';
import { buildIndex } from '../src/build.js';

// A gzipped crawl file larger than this is inflated as a stream from the disk, a smaller one
// from memory (SMALL_FILE_BYTES in indexer/corpus/read-file.ts): both must keep the same documents.
const SMALL_FILE_BYTES = 4 * 2 ** 20;

const work = mkdtempSync(join(tmpdir(), 'gpuindex-gzip-damage-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

/** JSONL lines d0, d1, ... of random words: text that gzip shrinks to about half, so that a few MB of it stay a few MB. */
function jsonLines(count: number): string[] {
  let s = 7;
  const word = (): string => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0).toString(36);
  return Array.from({ length: count }, (_, i) => JSON.stringify({ id: `d${i}`, text: Array.from({ length: 12 }, word).join(' ') }) + '\n');
}

const joined = (lines: string[]): Buffer => Buffer.from(lines.join(''));

/**
 * A gzip member of `a` then `b` whose deflate data is flushed (Z_FULL_FLUSH) after `a`: a block
 * starts at byte `boundary` of the member, so damage written there is seen by zlib at once, and
 * exactly the lines of `a` inflate before it.
 */
function memberFlushedAfter(a: Buffer, b: Buffer): { member: Buffer; boundary: number } {
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
  const first = deflateRawSync(a, { finishFlush: constants.Z_FULL_FLUSH });
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(Buffer.concat([a, b])) >>> 0, 0);
  trailer.writeUInt32LE(a.length + b.length, 4);
  return { member: Buffer.concat([header, first, deflateRawSync(b), trailer]), boundary: header.length + first.length };
}

/**
 * The naive reference: the ids of the lines that inflate whole from the file's first `upTo`
 * bytes, zlib flushing all it has (Z_SYNC_FLUSH) instead of failing on a cut stream.
 */
function idsInflatedFrom(file: Buffer, upTo: number): string[] {
  const lines = gunzipSync(file.subarray(0, upTo), { finishFlush: constants.Z_SYNC_FLUSH }).toString().split('\n');
  lines.pop(); // cut, or empty after the last newline
  return lines.map((l) => (JSON.parse(l) as { id: string }).id);
}

const ids = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `d${from + i}`);

async function read(name: string, bytes: Buffer): Promise<{ docs: string[]; skips: SkippedItem[] }> {
  const dir = join(work, `f${n++}`);
  mkdirSync(dir);
  writeFileSync(join(dir, name), bytes);
  const items: CorpusItem[] = [];
  for await (const item of readCorpusFile(dir, name)) items.push(item);
  return {
    docs: items.flatMap((i) => (i.kind === 'doc' ? [i.doc.externalId] : [])),
    skips: items.flatMap((i) => (i.kind === 'skip' ? [i.skip] : [])),
  };
}

/** The damage's one line: the line after the last document, the gzip fault, the rest skipped. */
const damageLine = (path: string, line: number) => ({
  path,
  line,
  reason: expect.stringMatching(/^(corrupt|truncated) gzip \(.+\); the rest of the file is skipped$/),
});

/** Bytes after a gzip member that are no member. (Node's gunzip takes a zero byte there for padding and ignores all after it.) */
const junk = fc.uint8Array({ minLength: 1, maxLength: 64 }).filter((b) => b[0] !== 0);

// The two sizes: the same member layout, [0, split) in the first member and [split, count) in the second.
const sizes = [
  { name: 'larger than 4 MiB (streamed from the disk)', count: 80_000, split: 50_000, large: true },
  { name: 'under 4 MiB (inflated from memory)', count: 16_000, split: 10_000, large: false },
];

describe.each(sizes)('a damaged .jsonl.gz $name keeps every line inflated before the damage, and reports it once', ({ count, split, large }) => {
  const lines = jsonLines(count);
  const first = gzipSync(joined(lines.slice(0, split)));
  const second = gzipSync(joined(lines.slice(split)));
  const onItsSide = (file: Buffer) => expect(file.length > SMALL_FILE_BYTES).toBe(large);

  it('junk after the last member', async () => {
    await fc.assert(
      fc.asyncProperty(junk, async (tail) => {
        const file = Buffer.concat([first, second, tail]);
        onItsSide(file);
        const { docs, skips } = await read('junk.jsonl.gz', file);
        expect(docs).toEqual(ids(0, count));
        expect(docs).toEqual(idsInflatedFrom(file, first.length + second.length));
        expect(skips).toEqual([damageLine('junk.jsonl.gz', count + 1)]);
      }),
      { numRuns: 4 },
    );
  });

  it('the last member cut short', async () => {
    // Cuts anywhere in the second member: its header, its deflate data, its trailer.
    const least = large ? SMALL_FILE_BYTES + 1 - first.length : 1;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: least, max: second.length - 1 }), async (cut) => {
        const file = Buffer.concat([first, second.subarray(0, cut)]);
        onItsSide(file);
        const { docs, skips } = await read('cut.jsonl.gz', file);
        const expected = idsInflatedFrom(file, file.length);
        expect(expected.length).toBeGreaterThanOrEqual(split);
        expect(docs).toEqual(expected);
        expect(skips).toEqual([damageLine('cut.jsonl.gz', expected.length + 1)]);
      }),
      { numRuns: 4 },
    );
  });

  it('a second member damaged in its middle', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: split + 1, max: count - 1 }),
        // A byte that opens a block of the reserved type 3: invalid, whatever follows.
        fc.integer({ min: 0, max: 255 }).map((b) => b | 6),
        async (at, bad) => {
          const { member, boundary } = memberFlushedAfter(joined(lines.slice(split, at)), joined(lines.slice(at)));
          member[boundary] = bad;
          const file = Buffer.concat([first, member]);
          onItsSide(file);
          const { docs, skips } = await read('corrupt.jsonl.gz', file);
          expect(docs).toEqual(ids(0, at));
          expect(docs).toEqual(idsInflatedFrom(file, first.length + boundary));
          expect(skips).toEqual([{ path: 'corrupt.jsonl.gz', line: at + 1, reason: 'corrupt gzip (invalid block type); the rest of the file is skipped' }]);
        },
      ),
      { numRuns: 4 },
    );
  });

  it('a JSON array keeps its elements before junk after its member; a whole-file document with junk after it is skipped in one line', async () => {
    const array = Buffer.concat([gzipSync(`[${lines.map((l) => l.trim()).join(',')}]`), Buffer.from('junk')]);
    onItsSide(array);
    const a = await read('junk.json.gz', array);
    expect(a.docs).toEqual(ids(0, count));
    expect(a.skips).toEqual([{ path: 'junk.json.gz', line: count, reason: `corrupt gzip (incorrect header check) at array element ${count}; the rest of the file is skipped` }]);
    const text = Buffer.concat([first, second, Buffer.from('junk')]);
    const t = await read('junk.txt.gz', text);
    expect(t.docs).toEqual([]);
    expect(t.skips).toEqual([{ path: 'junk.txt.gz', reason: 'corrupt gzip (incorrect header check)' }]);
  });
});

describe('a damaged .jsonl.gz in a build', () => {
  it('indexes every line before the damage and counts the damage once', async () => {
    const lines = jsonLines(80_000);
    const crawl = join(work, 'crawl');
    mkdirSync(crawl);
    const { member, boundary } = memberFlushedAfter(joined(lines.slice(50_000, 70_123)), joined(lines.slice(70_123)));
    member[boundary] = 0xff;
    const file = Buffer.concat([gzipSync(joined(lines.slice(0, 50_000))), member]);
    expect(file.length).toBeGreaterThan(SMALL_FILE_BYTES);
    writeFileSync(join(crawl, 'crawl.jsonl.gz'), file);
    const warnings: string[] = [];
    const summary = await buildIndex({ input: crawl, output: join(work, 'idx'), sorter: 'cpu', workers: 1, stem: 'none', onWarning: (w) => warnings.push(w) });
    expect(summary.documents).toBe(70_123);
    expect(summary.skipped.count).toBe(1);
    expect(summary.skipped.items).toEqual([{ path: 'crawl.jsonl.gz', line: 70_124, reason: 'corrupt gzip (invalid block type); the rest of the file is skipped' }]);
    expect(warnings.filter((w) => w.includes('crawl.jsonl.gz'))).toHaveLength(1);
  });
});
