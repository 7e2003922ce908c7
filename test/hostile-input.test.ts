import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { openIndex } from '../src/reader.js';
import { QueryError } from '../src/query/parse.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-hostile-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

/** A damaged file: random bytes under an indexable name, or a good file cut or corrupted. */
const junk = fc.oneof(
  fc.record({ name: fc.constantFrom('x.txt', 'x.md', 'x.html', 'x.json', 'x.jsonl', 'x.ndjson', 'x.jsonl.gz', 'x.txt.gz', 'x.json.gz'), bytes: fc.uint8Array({ maxLength: 600 }) }),
  fc.record({
    name: fc.constant('cut.jsonl.gz'),
    bytes: fc.nat({ max: 60 }).map((cut) => new Uint8Array(gzipSync('{"id":"c","text":"gz"}\n'.repeat(20)).subarray(0, cut))),
  }),
  fc.record({ name: fc.constant('deep.json'), bytes: fc.integer({ min: 1, max: 20000 }).map((d) => new TextEncoder().encode('['.repeat(d) + ']'.repeat(d % 3 === 0 ? d : 0))) }),
  fc.record({ name: fc.constant('broken.json'), bytes: fc.nat({ max: 40 }).map((cut) => new TextEncoder().encode('[{"id":"j1","text":"good json"},{"id":"j2","text":"good json"}]'.slice(0, 20 + cut))) }),
);

describe('hostile input', () => {
  it('the build completes and indexes every good document whatever junk sits beside it (fuzzed)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(junk, { maxLength: 6 }), fc.integer({ min: 1, max: 5 }), async (files, goodCount) => {
        const crawl = join(work, `crawl-${n++}`);
        mkdirSync(join(crawl, 'junk'), { recursive: true });
        // Good documents carry a marker term no junk can produce (a random file could, but
        // only with vanishing probability: 'zzmarker' plus a number).
        const good = Array.from({ length: goodCount }, (_, i) => JSON.stringify({ id: `good-${i}`, text: `zzmarkerq the good document ${i}` }));
        writeFileSync(join(crawl, 'good.jsonl'), good.join('\n') + '\n');
        files.forEach((f, i) => writeFileSync(join(crawl, 'junk', `${i}-${f.name}`), f.bytes));
        const out = join(work, `idx-${n++}`);
        const summary = await buildIndex({ input: crawl, output: out, sorter: 'cpu', workers: 1, stem: 'none' });
        const reader = openIndex(out);
        try {
          const ids = reader.search('zzmarkerq', { k: 100 }).map((h) => h.externalId).sort();
          expect(ids).toEqual(good.map((_, i) => `good-${i}`).sort());
          for (const s of summary.skipped.items) {
            expect(s.path).toMatch(/^junk\//);
            expect(s.reason).not.toMatch(/\n/);
          }
        } finally {
          reader.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('a JSON array nested a million levels deep is skipped, not a crash', async () => {
    const crawl = join(work, 'deep');
    mkdirSync(crawl);
    writeFileSync(join(crawl, 'deep.json'), '['.repeat(1_000_000) + ']'.repeat(1_000_000));
    writeFileSync(join(crawl, 'ok.txt'), 'a plain document');
    const summary = await buildIndex({ input: crawl, output: join(work, 'deep-idx'), sorter: 'cpu', workers: 1 });
    expect(summary.documents).toBe(1);
    expect(summary.skipped.count).toBeGreaterThanOrEqual(1);
    expect(summary.skipped.items[0]!.path).toBe('deep.json');
  });
});

describe('hostile queries', () => {
  it('search answers or refuses cleanly: empty, only stopwords, regex metacharacters, quotes, NUL, 100 kB', async () => {
    const out = join(work, 'q-idx');
    await buildIndex({ input: [{ id: 'a', text: "the white whale's (regex) [chars] .* and \"quotes\"" }], output: out });
    const reader = openIndex(out);
    try {
      expect(reader.search('')).toEqual([]);
      expect(reader.search('the and of')).toEqual([]);
      expect(reader.search('.* [chars] regex \\ ^$ | +?').map((h) => h.externalId)).toEqual(['a']);
      expect(reader.search('"quotes" \' ; DROP TABLE terms;').map((h) => h.externalId)).toEqual(['a']);
      // The query language refuses what it cannot read, in one line (docs/API.md, Queries).
      expect(() => reader.search('.* [chars] (regex)')).toThrow(new QueryError('query: parentheses (grouping) are not supported (column 12): .* [chars] (regex)'));
      expect(() => reader.search('DROP TABLE terms; --')).toThrow(new QueryError("query: '--': one operator before a term (column 19): DROP TABLE terms; --"));
      expect(() => reader.search('"white whale" quotes')).toThrow(/phrase/);
      expect(reader.search('whale\u0000s')).toHaveLength(1);
      expect(reader.search('whale '.repeat(20000))).toHaveLength(1);
      expect(() => reader.search('whale', { k: 0 })).toThrow('k must be a positive integer, got 0');
      expect(reader.lexiconEntry("x' OR '1'='1")).toBeUndefined();
    } finally {
      reader.close();
    }
  });
});
