/**
 * The merge's fast paths against naive references: whole (run, term) segments merged by docID in
 * stretches (mergeSegments, mergeRuns) against an in-memory inversion of the same pairs, and
 * the one-pass encode of a list with its impacts against encodePostings plus ImpactsBuilder.add.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeRuns, mergeSegments, SegmentHeap } from '../merge/heap-merge.js';
import { ImpactsBuilder, IMPACT_BLOCK } from '../merge/impact-blocks.js';
import { encodePostings, maxEncodedBytes } from '../merge/postings-codec.js';
import { writeRunFile, type PostingsColumns } from '../merge/runs.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-merge-stretches-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function columns(capacity = 1): PostingsColumns {
  const c: PostingsColumns = {
    docIds: new Uint32Array(capacity),
    tfs: new Uint32Array(capacity),
    df: 0,
    reserve(n) {
      if (n <= c.docIds.length) return;
      const d = new Uint32Array(n);
      d.set(c.docIds.subarray(0, c.df));
      const t = new Uint32Array(n);
      t.set(c.tfs.subarray(0, c.df));
      c.docIds = d;
      c.tfs = t;
    },
  };
  return c;
}

/** The (docID, tf) pairs of several lists summed by docID, in docID order. */
function naiveUnion(lists: [number, number][][]): [number, number][] {
  const byDoc = new Map<number, number>();
  for (const l of lists) for (const [d, tf] of l) byDoc.set(d, (byDoc.get(d) ?? 0) + tf);
  return [...byDoc].sort((a, b) => a[0] - b[0]);
}

/** A strictly increasing list of (docID, tf), docIDs below `docs`. */
const segment = (docs: number) =>
  fc.uniqueArray(fc.integer({ min: 0, max: docs - 1 }), { maxLength: 40 }).chain((ds) =>
    fc.array(fc.integer({ min: 1, max: 300 }), { minLength: ds.length, maxLength: ds.length }).map((tfs) => ds.sort((a, b) => a - b).map((d, i): [number, number] => [d, tfs[i]!])),
  );

describe('mergeSegments', () => {
  it('equals the docID-summed union of its segments, for any overlap of the segments', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }).chain((docs) => fc.array(segment(docs), { minLength: 1, maxLength: 12 })), (segs) => {
        const from = columns();
        const starts = new Int32Array(segs.length + 1);
        segs.forEach((s, i) => {
          starts[i] = from.df;
          from.reserve(from.df + s.length);
          for (const [d, tf] of s) {
            from.docIds[from.df] = d;
            from.tfs[from.df++] = tf;
          }
        });
        starts[segs.length] = from.df;
        const out = columns();
        mergeSegments(from, starts, segs.length, out, new SegmentHeap(segs.length));
        expect(Array.from(out.docIds.subarray(0, out.df), (d, i) => [d, out.tfs[i]!])).toEqual(naiveUnion(segs));
      }),
      { numRuns: 300 },
    );
  });
});

describe('mergeRuns over interleaved runs', () => {
  /**
   * A crawl of documents, each a bag of term occurrences, handed to `workers` workers in batches
   * (so workers' documents interleave in docID order), each worker sealing a run every
   * `blockPairs` pairs: a document may be split across two of its worker's runs.
   */
  const crawl = fc.record({
    docs: fc.array(fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 60 }),
    workers: fc.integer({ min: 1, max: 5 }),
    batch: fc.integer({ min: 1, max: 6 }),
    blockPairs: fc.integer({ min: 1, max: 80 }),
    chunkPairs: fc.integer({ min: 1, max: 9 }),
  });

  it('gives the naive inversion of the crawl, byte for byte in its encoding', () => {
    fc.assert(
      fc.property(crawl, ({ docs, workers, batch, blockPairs, chunkPairs }) => {
        const pending: [number, number][][] = Array.from({ length: workers }, () => []);
        const paths: string[] = [];
        const seal = (w: number) => {
          const pairs = pending[w]!;
          if (pairs.length === 0) return;
          pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
          const path = join(dir, `run-${files++}.bin`);
          writeRunFile(path, new Uint32Array(pairs.flat()), pairs.length, 13);
          paths.push(path);
          pending[w] = [];
        };
        const naive = new Map<number, Map<number, number>>();
        docs.forEach((terms, docId) => {
          const w = Math.floor(docId / batch) % workers;
          for (const t of terms) {
            pending[w]!.push([t, docId]);
            if (!naive.has(t)) naive.set(t, new Map());
            naive.get(t)!.set(docId, (naive.get(t)!.get(docId) ?? 0) + 1);
            if (pending[w]!.length >= blockPairs) seal(w);
          }
        });
        for (let w = 0; w < workers; w++) seal(w);
        const got: [number, [number, number][]][] = [];
        const bytes: number[] = [];
        const counters = mergeRuns(paths, chunkPairs, (t, d, tf, df) => {
          got.push([t, Array.from(d.subarray(0, df), (x, i) => [x, tf[i]!])]);
          const out = new Uint8Array(maxEncodedBytes(df));
          bytes.push(...out.subarray(0, encodePostings(d, tf, df, out, 0)));
        });
        const expected = [...naive].sort((a, b) => a[0] - b[0]).map(([t, m]): [number, [number, number][]] => [t, [...m].sort((a, b) => a[0] - b[0])]);
        expect(got).toEqual(expected);
        const expectedBytes: number[] = [];
        for (const [, list] of expected) {
          const out = new Uint8Array(maxEncodedBytes(list.length));
          const n = encodePostings(Uint32Array.from(list, (p) => p[0]), Uint32Array.from(list, (p) => p[1]), list.length, out, 0);
          expectedBytes.push(...out.subarray(0, n));
        }
        expect(bytes).toEqual(expectedBytes);
        expect(counters.terms).toBe(expected.length);
      }),
      { numRuns: 150 },
    );
  });
});

describe('ImpactsBuilder.encode', () => {
  it('writes encodePostings bytes and the impacts of ImpactsBuilder.add', () => {
    // Gaps and tfs of 1 to 5 varint bytes (the first gap is the docID, up to 2^21), lists across block boundaries.
    const list = fc.tuple(
      fc.integer({ min: 0, max: 2 ** 21 }),
      fc.array(fc.tuple(fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3000 })), fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 2 ** 31 }))), { minLength: 1, maxLength: 3 * IMPACT_BLOCK + 7 }),
    );
    fc.assert(
      fc.property(fc.array(list, { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 7 }), (lists, offset) => {
        let docs = 0;
        const columnsOf = lists.map(([base, l]) => {
          const docIds = new Uint32Array(l.length);
          const tfs = new Uint32Array(l.length);
          let d = base;
          l.forEach(([gap, tf], i) => {
            docIds[i] = d += i === 0 ? 0 : gap;
            tfs[i] = tf;
          });
          docs = Math.max(docs, d + 1);
          return { docIds, tfs, df: l.length };
        });
        const lengths = new Uint32Array(docs);
        for (const c of columnsOf) for (const d of c.docIds) lengths[d] = 1 + ((d * 2654435761) % 997);
        const oneByOne = new ImpactsBuilder(lengths);
        const together = new ImpactsBuilder(lengths);
        for (const { docIds, tfs, df } of columnsOf) {
          const expected = new Uint8Array(maxEncodedBytes(df));
          const n = encodePostings(docIds, tfs, df, expected, 0);
          oneByOne.add(docIds, tfs, df);
          // Written at an offset into a shared buffer, as the postings writer does.
          const out = new Uint8Array(offset + maxEncodedBytes(df));
          const end = together.encode(docIds, tfs, df, out, offset);
          expect(out.subarray(offset, end)).toEqual(expected.subarray(0, n));
        }
        expect(together.finish()).toEqual(oneByOne.finish());
      }),
      { numRuns: 100 },
    );
  });
});
