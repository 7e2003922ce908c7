import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { radixSortPairs } from '../indexer/sort/cpu-sorter.js';
import { mergeRuns } from '../merge/heap-merge.js';
import { PostingsFileWriter } from '../merge/postings-file.js';
import { PostingsTally } from '../merge/postings-tally.js';
import { writeRunFile } from '../merge/runs.js';
import { postingsParts, writeDocOrderPostings, writeDocOrderPostingsPart } from '../merge/doc-order-postings.js';
import { ImpactsBuilder } from '../merge/impact-blocks.js';

/** Bytes of v as a varint. */
const varintBytes = (v: number): number => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);

const work = mkdtempSync(join(tmpdir(), 'gpuindex-tally-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

/**
 * A block as the fill makes it: batches of documents in docID order, each batch's pairs holding
 * (termID, document index in the batch) and its first docID as the base; every termID below the
 * largest occurs (TermIds are numbered on first sight). Ids up to 2^21 so that varints of
 * every length from 1 to 4 bytes occur.
 */
const block = fc
  .array(fc.array(fc.array(fc.nat(40), { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 6 })
  .chain((batches) => fc.tuple(fc.constant(batches), fc.array(fc.nat(2 ** 21), { minLength: batches.length, maxLength: batches.length })));

/** A document length for docID d and a seed (lengths only matter for the impacts: any values do). */
const lengthOf = (d: number, seed: number): number => ((Math.imul(d + 1, 0x9e3779b1) ^ seed) >>> 0) % 50;

/** A seeded permutation of 0..n-1 (the file's list order). */
function permutation(n: number, seed: number): Uint32Array {
  const p = Uint32Array.from({ length: n }, (_, i) => i);
  let a = seed >>> 0;
  for (let i = n - 1; i > 0; i--) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    const j = a % (i + 1);
    [p[i], p[j]] = [p[j]!, p[i]!];
  }
  return p;
}

describe('PostingsTally (the lexicon before the sort)', () => {
  it('gives the df, cf, lengths, gap bytes and offsets of the heap merge of the block as one run, and writeDocOrderPostings writes that postings.bin from the unsorted block, and the lists\' impacts in any file order', () => {
    fc.assert(
      fc.property(block, fc.nat(), ([batches, gaps], seed) => {
        // Renumber the terms in order of first sight, as the dictionary does.
        const ids = new Map<number, number>();
        const tally = new PostingsTally();
        const pairs: number[] = [];
        const whole: number[] = [];
        const docBases: number[] = [];
        let docBase = 0;
        batches.forEach((docs, b) => {
          docBase += gaps[b]!;
          docBases.push(pairs.length / 2, docBase);
          const batch: number[] = [];
          docs.forEach((terms, d) => {
            for (const t of terms) {
              if (!ids.has(t)) ids.set(t, ids.size);
              batch.push(ids.get(t)!, d);
              whole.push(ids.get(t)!, docBase + d);
            }
          });
          tally.add(Uint32Array.from(batch), 0, batch.length / 2, docBase);
          pairs.push(...batch);
          docBase += docs.length;
        });
        const count = whole.length / 2;
        const lexicon = tally.finish();
        expect(lexicon.terms).toBe(ids.size);

        // The reference: the block sorted, as one run, through the ordinary merge.
        const sorted = radixSortPairs(Uint32Array.from(whole), count, new Uint32Array(2 * count));
        const run = join(work, `run-${n}.bin`);
        writeRunFile(run, sorted, count);
        const mergedPath = join(work, `merged-${n++}.bin`);
        const merged = new PostingsFileWriter(mergedPath);
        const rows: number[][] = [];
        const gapColumns: number[] = [];
        const lists: { docIds: Uint32Array; tfs: Uint32Array; df: number }[] = [];
        mergeRuns([run], 1 << 12, (termId, docIds, tfs, df) => {
          lists.push({ docIds: docIds.slice(0, df), tfs: tfs.slice(0, df), df });
          const { offset, length } = merged.append(docIds, tfs, df);
          let cf = 0;
          for (let i = 0; i < df; i++) cf += tfs[i]!;
          rows.push([termId, df, cf, offset, length]);
          let gapBytes = 0;
          for (let i = 0; i < df; i++) gapBytes += varintBytes(docIds[i]! - (i > 0 ? docIds[i - 1]! : 0));
          gapColumns.push(gapBytes);
        });
        const sha256 = merged.close();
        expect(rows).toEqual(Array.from({ length: lexicon.terms }, (_, t) => [t, lexicon.df[t], lexicon.cf[t], lexicon.offsets[t], lexicon.lengths[t]]));
        expect(gapColumns).toEqual(Array.from(lexicon.gapBytes));
        expect(lexicon.postings).toBe(rows.reduce((a, r) => a + r[1]!, 0));
        expect(lexicon.postingsBytes).toBe(merged.offset);

        // The same file, written from the unsorted block at the tally's places.
        const docOrderPath = join(work, `doc-order-${n}.bin`);
        const direct = writeDocOrderPostings(Uint32Array.from(pairs), count, Uint32Array.from(docBases), lexicon, docOrderPath);
        expect(direct).toEqual({ sha256, bytes: merged.offset, terms: ids.size, postings: lexicon.postings });
        expect(readFileSync(docOrderPath).equals(readFileSync(mergedPath))).toBe(true);

        // With the documents' lengths, the lists' impacts in the file's order (here any
        // permutation), as the merge builds them from the lists in that order.
        const lengths = new Uint32Array(docBase);
        for (let i = 1; i < whole.length; i += 2) lengths[whole[i]!] = lengthOf(whole[i]!, seed);
        const order = permutation(lexicon.terms, seed);
        const reference = new ImpactsBuilder(lengths);
        for (const t of order) reference.add(lists[t]!.docIds, lists[t]!.tfs, lists[t]!.df);
        const wholePath = join(work, `doc-order-impacts-${n}.bin`);
        const withImpacts = writeDocOrderPostings(Uint32Array.from(pairs), count, Uint32Array.from(docBases), { ...lexicon, order }, wholePath, undefined, lengths);
        expect(withImpacts.impacts).toEqual([reference.finish()]);

        // The same file and impacts in 1 to 4 parts, each written by itself into one file.
        const k = 1 + (seed % 4);
        const parts = postingsParts({ ...lexicon, order }, k);
        expect(parts[0]!.from).toBe(0);
        expect(parts[parts.length - 1]!.to).toBe(lexicon.terms);
        parts.forEach((p, i) => i > 0 && expect(p.from).toBe(parts[i - 1]!.to));
        const partsPath = join(work, `doc-order-parts-${n}.bin`);
        writeFileSync(partsPath, '');
        let postingsInParts = 0;
        for (const part of parts) {
          const written = writeDocOrderPostingsPart(Uint32Array.from(pairs), count, Uint32Array.from(docBases), { ...lexicon, order }, part, partsPath, undefined, lengths);
          postingsInParts += written.postings;
          const ref = new ImpactsBuilder(lengths);
          for (const t of order.subarray(part.from, part.to)) ref.add(lists[t]!.docIds, lists[t]!.tfs, lists[t]!.df);
          expect(written.impacts).toEqual(ref.finish());
        }
        expect(postingsInParts).toBe(lexicon.postings);
        expect(readFileSync(partsPath).equals(readFileSync(wholePath))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('writeDocOrderPostings refuses pairs that do not give the layout, or are out of docID order, and leaves no file', () => {
    const tally = new PostingsTally();
    const pairs = Uint32Array.from([0, 0, 1, 0, 0, 1, 0, 1, 1, 2]); // (term, doc): 0:{0,1,1} 1:{0,2}
    tally.add(pairs, 0, 5, 0);
    const lexicon = tally.finish();
    const none = new Uint32Array(0);
    const ok = join(work, 'layout-ok.bin');
    expect(writeDocOrderPostings(pairs, 5, none, lexicon, ok).postings).toBe(4);
    // Term 0's list taken as a byte shorter: the check at the end names the term.
    const short = { lengths: Uint32Array.from([lexicon.lengths[0]! - 1, lexicon.lengths[1]!]), gapBytes: lexicon.gapBytes };
    const shortPath = join(work, 'layout-short.bin');
    expect(() => writeDocOrderPostings(pairs, 5, none, short, shortPath)).toThrow(/^termID 0: its list took 2 gap bytes and 4 in all, the layout says 2 and 3$/);
    expect(() => readFileSync(shortPath)).toThrow(/ENOENT/);
    expect(() => writeDocOrderPostings(Uint32Array.from([0, 1, 0, 0]), 2, none, lexicon, join(work, 'order.bin'))).toThrow(
      /^pair 1: docID 0 of termID 0 follows docID 1 \(the block must be in docID order\)$/,
    );
    expect(() => writeDocOrderPostings(Uint32Array.from([2, 0]), 1, none, lexicon, join(work, 'term.bin'))).toThrow(/^pair 0: termID 2 is not in the layout's 2 terms$/);
  });
});
