/**
 * What the reader keeps between queries (src/query/list-cache.ts, chunks of document rows
 * (src/query/row-chunks.ts), the segments' lexicon entries, block bounds and row statements)
 * changes no answer: the budget cache against a naive LRU, a chunk's rows against the table's,
 * and searches with and without the caches, repeated, across a writer's refreshes and reopen().
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ListCache } from '../src/query/list-cache.js';
import { chunkRow, rowChunk, type JoinedRows } from '../src/query/row-chunks.js';
import { openIndex } from '../src/reader.js';
import { openWriter } from '../src/writer.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-caches-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('list cache', () => {
  it('keeps the most recently used lists that fit the budget, as a naive LRU does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 64 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 1, max: 40 })), { maxLength: 200 }),
        (budget, ops) => {
          const cache = new ListCache(budget);
          /** Naive: keys most recent last, with their sizes. */
          let lru: [number, number][] = [];
          const sizes = new Map<number, number>();
          for (const [key, size] of ops) {
            const got = cache.get(key);
            const at = lru.findIndex(([x]) => x === key);
            expect(got?.length).toBe(at >= 0 ? lru[at]![1] : undefined);
            if (at >= 0) {
              lru.push(lru.splice(at, 1)[0]!);
              continue;
            }
            // A miss: the caller reads the list (its size fixed by its key, as a list's is) and puts it.
            const length = sizes.get(key) ?? size;
            sizes.set(key, length);
            const list = new Uint8Array(length);
            expect(cache.put(key, list)).toBe(list);
            if (length <= budget) {
              lru.push([key, length]);
              let total = lru.reduce((a, [, s]) => a + s, 0);
              while (total > budget) total -= lru.shift()![1];
            }
            expect(cache.size).toBe(lru.reduce((a, [, s]) => a + s, 0));
            expect(cache.size).toBeLessThanOrEqual(budget);
          }
          lru = [];
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('row chunks', () => {
  it('give each document its own external id and path, or nothing where the rows do not split into one a docID', () => {
    // Values with U+0000 (the separator), empty ones, non-Latin-1 ones; docIDs (a primary key:
    // ascending, no repeats) dense, or with a gap before row `gapAt`.
    const value = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('', '\0', 'a\0b', 'é', '😀x', 'path/to/file.html'));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), fc.array(fc.tuple(value, value), { minLength: 1, maxLength: 40 }), fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }), (from, rows, gapAt) => {
        const table = rows.map(([id, path], i) => ({ docId: from + i + (gapAt !== undefined && i >= gapAt ? 1 : 0), id, path }));
        const to = from + table.length;
        const ids = table.map((r) => r.docId);
        const joined: JoinedRows = [table.length, Math.min(...ids), Math.max(...ids), table.map((r) => r.id).join('\0'), table.map((r) => r.path).join('\0')];
        const chunk = rowChunk(joined, from, to);
        const dense = table.every((r, i) => r.docId === from + i);
        const separated = table.every((r) => !r.id.includes('\0') && !r.path.includes('\0'));
        if (!dense || !separated) {
          expect(chunk).toBeUndefined();
          return;
        }
        expect(chunk).toBeDefined();
        table.forEach((r, i) => expect(chunkRow(chunk!, i)).toEqual([r.id, r.path]));
      }),
      { numRuns: 500 },
    );
  });
});

describe('reader caches', () => {
  const WORDS = ['whale', 'ship', 'sea', 'ahab', 'white', 'harpoon', 'deck', 'storm', 'oil', 'boat'];
  const analysis = { stem: 'none', stopwords: 'none', sorter: 'cpu' } as const;

  it('answer as a reader without them, query after query, across refreshes and reopen()', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        // Batches of thousands of documents (drawn from a seed), so a segment's frequent lists
        // pass the 4 KiB from which they are cached.
        fc.array(fc.integer({ min: 1, max: 4000 }), { minLength: 2, maxLength: 3 }),
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.array(fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 3 }),
        async (sizes, seed, queries, deleteEvery) => {
          const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
          // Skewed: low words in most documents.
          const batches = sizes.map((size) => Array.from({ length: size }, () => Array.from({ length: 1 + Math.floor(rnd() * 12) }, () => Math.floor(rnd() ** 2 * WORDS.length))));
          const dir = join(work, `w${n++}`);
          const writer = await openWriter(dir, { ...analysis, refreshMs: 0, mergePolicy: false });
          let reader = writer.reader();
          let id = 0;
          let cached = 0;
          try {
            for (const batch of batches) {
              // One id holds U+0000, the row chunks' separator: its chunk's rows are looked up one by one.
              await writer.add(batch.map((d) => ({ id: id === 5 ? `d\0${id++}` : `d${id++}`, text: d.map((w) => WORDS[w]).join(' ') })));
              if (deleteEvery > 0) await writer.delete(Array.from({ length: Math.floor(id / (deleteEvery * 7)) }, (_, i) => `d${i * deleteEvery * 7}`));
              await writer.commit();
              const reopened = reader.reopen();
              if (reopened !== reader) reader.close();
              reader = reopened;
              const fresh = openIndex(dir, { listCacheBytes: 0, rowCacheBytes: 0 });
              // A row budget of a few chunks: chunks dropped and read again.
              const small = openIndex(dir, { listCacheBytes: 5000, rowCacheBytes: 40_000 });
              try {
                for (let round = 0; round < 2; round++) {
                  // `whale` (about 88 % of the documents) always: its list passes 4 KiB in a batch of 3,000.
                  for (const q of [[0], ...queries]) {
                    const query = q.map((w) => WORDS[w]).join(' ');
                    const expected = fresh.search(query, { k: 7 });
                    expect(reader.search(query, { k: 7 })).toEqual(expected);
                    expect(small.search(query, { k: 7 })).toEqual(expected);
                  }
                }
                cached = Math.max(cached, (reader as unknown as { lists: ListCache }).lists.size);
              } finally {
                fresh.close();
                small.close();
              }
            }
            // Lists of 4 KiB and more were cached (and answered the second round) wherever the index held one.
            if (sizes.some((s) => s >= 3000)) expect(cached).toBeGreaterThan(0);
          } finally {
            reader.close();
            await writer.close();
          }
        },
      ),
      { numRuns: 10, seed: 64 },
    );
  });

  it('refuses a cache budget that is not a whole number of bytes, in one line', () => {
    for (const bad of [-1, 1.5, Number.NaN]) {
      expect(() => openIndex(join(work, 'none'), { listCacheBytes: bad })).toThrow(/^listCacheBytes must be a whole number of bytes, got /);
      expect(() => openIndex(join(work, 'none'), { rowCacheBytes: bad })).toThrow(/^rowCacheBytes must be a whole number of bytes, got /);
    }
  });
});
