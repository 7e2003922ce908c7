/**
 * The 128-posting block codec (merge/block-codec.ts), measured against varint by
 * bench/block-codec.mjs: its lists decode to what was encoded, its layout is the impacts', and
 * the pruned evaluation over lists re-encoded in it gives the varint lists' hits, scores and order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { BLOCK, blockLayout, decodeBlockPostings, encodeBlockPostings, maxBlockEncodedBytes, packSegment } from '../merge/block-codec.js';
import { readImpacts } from '../merge/impacts.js';
import { impactsByTerm } from '../merge/impact-blocks.js';
import { SegmentReader } from '../merge/segment-reader.js';
import { buildIndex } from '../src/build.js';
import { prunedTopK, type SegmentInput } from '../src/query/evaluate.js';
import { planQuery } from '../src/query/plan.js';
import { openIndex } from '../src/reader.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-codec-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Gaps of every width: mostly small, some up to 2^32 − 1 (the list stays below 2^32). */
const gap = fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 2 ** 20 }), fc.integer({ min: 1, max: 2 ** 31 }));
const tf = fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 2 ** 32 - 1 }));

describe('block codec', () => {
  it('decodes every list to what was encoded, in the bytes the widths say, with the blocks where the layout puts them', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 20 }), fc.array(fc.tuple(gap, tf), { minLength: 1, maxLength: 3 * BLOCK + 5 }), (first, postings) => {
        const docIds: number[] = [];
        let d = first;
        for (const [g] of postings) {
          if (docIds.length > 0) d += g;
          if (d >= 2 ** 32) break;
          docIds.push(d);
        }
        const df = docIds.length;
        const ids = Uint32Array.from(docIds);
        const tfs = Uint32Array.from(postings.slice(0, df), ([, t]) => t);
        const out = new Uint8Array(maxBlockEncodedBytes(df) + 4);
        const end = encodeBlockPostings(ids, tfs, df, out, 3);
        const bytes = out.subarray(3, end);
        const back = decodeBlockPostings(bytes, df);
        expect([...back.docIds]).toEqual(docIds);
        expect([...back.tfs]).toEqual([...tfs]);
        // Naive size: per block 2 bytes and each column's values at the widest one's bits.
        let size = 0;
        const bits = (v: number) => (v === 0 ? 0 : v.toString(2).length);
        for (let s = 0; s < df; s += BLOCK) {
          const n = Math.min(BLOCK, df - s);
          const gaps = docIds.slice(s, s + n).map((x, i) => x - (s + i === 0 ? 0 : docIds[s + i - 1]!));
          size += 2 + Math.ceil((n * Math.max(...gaps.map(bits))) / 8) + Math.ceil((n * Math.max(...[...tfs.slice(s, s + n)].map((t) => bits(t - 1)))) / 8);
        }
        expect(bytes.length).toBe(size);
        const blocks = Math.ceil(df / BLOCK);
        const gapsAt = new Uint32Array(blocks);
        const tfsAt = new Uint32Array(blocks);
        const lastDoc = new Uint32Array(blocks);
        blockLayout(bytes, df, gapsAt, tfsAt, lastDoc, 0);
        for (let b = 0; b < blocks; b++) {
          expect(lastDoc[b]).toBe(docIds[Math.min(df, (b + 1) * BLOCK) - 1]);
          expect(tfsAt[b]).toBeGreaterThan(gapsAt[b]!);
          expect(gapsAt[b]).toBe(b === 0 ? 0 : (b > 0 ? tfsAt[b - 1]! + Math.ceil((Math.min(BLOCK, df - (b - 1) * BLOCK) * bytes[gapsAt[b - 1]! + 1]!) / 8) : 0));
        }
        expect(() => decodeBlockPostings(out.subarray(3, end + 1), df)).toThrow(/1 trailing bytes/);
      }),
      { numRuns: 400 },
    );
  });

  it('the pruned evaluation over the lists re-encoded gives the varint lists\' hits, scores and order', async () => {
    const WORDS = ['whale', 'ship', 'sea', 'ahab', 'white', 'harpoon', 'deck', 'storm', 'oil', 'boat'];
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { maxLength: 12 }), { minLength: 1, maxLength: 700 }),
        fc.array(fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 12 }),
        async (docs, queries, k) => {
          // Skewed: word i in about 1/(i+1) of the documents, so lists span several blocks.
          const texts = docs.map((d, i) => d.map((w) => WORDS[(w * (i % 7)) % WORDS.length]).join(' '));
          const output = join(work, `i${n++}`);
          await buildIndex({ input: texts.map((text, i) => ({ id: `d${i}`, text })), output, stem: 'none', stopwords: 'none', sorter: 'cpu' });
          const reader = openIndex(output);
          const segment = new SegmentReader(output);
          try {
            const impacts = readImpacts(output, segment.stats.terms)!;
            const packed = packSegment(segment, impacts);
            const lengths = segment.documentLengths();
            const termId = (term: string) => segment.lexicon.entry(term)?.termId;
            const f = segment.figures();
            const input = (format: 'varint' | 'bp128'): SegmentInput => ({
              docBase: 0,
              lengths,
              impacts: (t) => impactsByTerm(format === 'varint' ? impacts : packed.impacts).term(t),
              list: (term) => {
                const t = termId(term);
                if (t === undefined) return undefined;
                const bytes = format === 'varint' ? segment.readListBytes(f.offset[t]!, f.length[t]!) : packed.bytes.subarray(packed.offset[t]!, packed.offset[t]! + packed.length[t]!);
                return { termId: t, df: f.df[t]!, bytes };
              },
              decoded: () => undefined,
            });
            const N = segment.stats.documents;
            const avg = segment.stats.averageLength || 1;
            for (const q of queries) {
              const query = q.map((w, i) => (i === 1 && w % 3 === 0 ? '+' : '') + WORDS[w]).join(' ');
              const plan = planQuery(query, (t) => reader.analyze(t), { positions: false, fields: [] });
              const idf = Float64Array.from(plan.terms, (t) => {
                const id = termId(t.term);
                const df = id === undefined ? 0 : f.df[id]!;
                return df > 0 ? Math.log(1 + (N - df + 0.5) / (df + 0.5)) : 0;
              });
              const p = { k1: 0.9, b: 0.4, avg, idf };
              const varint = prunedTopK([input('varint')], plan, p, k);
              expect(prunedTopK([input('bp128')], plan, p, k)).toEqual(varint);
              expect(reader.search(query, { k }).map((h) => [h.docId, h.score])).toEqual(varint);
            }
          } finally {
            segment.close();
            reader.close();
          }
        },
      ),
      { numRuns: 30, seed: 128 },
    );
  });
});
