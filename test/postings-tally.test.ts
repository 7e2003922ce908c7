import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { radixSortPairs } from '../indexer/cpu-sorter.js';
import { mergeRuns } from '../merge/heap-merge.js';
import { PostingsFileWriter } from '../merge/postings-file.js';
import { PostingsTally } from '../merge/postings-tally.js';
import { writeRunFile } from '../merge/runs.js';
import { writeSortedBlockPostings } from '../merge/sorted-block-postings.js';

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

describe('PostingsTally (the lexicon before the sort)', () => {
  it('gives the df, cf, lengths and offsets that the sorted block written as postings.bin has, and that file is the heap merge of its one run', () => {
    fc.assert(
      fc.property(block, ([batches, gaps]) => {
        // Renumber the terms in order of first sight, as the dictionary does.
        const ids = new Map<number, number>();
        const tally = new PostingsTally();
        const pairs: number[] = [];
        const whole: number[] = [];
        let docBase = 0;
        batches.forEach((docs, b) => {
          docBase += gaps[b]!;
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
        const sorted = radixSortPairs(Uint32Array.from(whole), count, new Uint32Array(2 * count));
        const path = join(work, `postings-${n++}.bin`);
        const written = writeSortedBlockPostings(sorted, count, path);
        const lexicon = tally.finish();
        expect(lexicon.terms).toBe(ids.size);
        expect(written.terms).toBe(ids.size);
        expect(Array.from(lexicon.lengths)).toEqual(Array.from(written.lengths));
        expect(lexicon.postings).toBe(written.postings);
        expect(lexicon.postingsBytes).toBe(written.bytes);

        // The same file, and the same per-term figures, from the ordinary merge of one run.
        const run = join(work, `run-${n}.bin`);
        writeRunFile(run, sorted, count);
        const mergedPath = join(work, `merged-${n}.bin`);
        const merged = new PostingsFileWriter(mergedPath);
        const rows: number[][] = [];
        mergeRuns([run], 1 << 12, (termId, docIds, tfs, df) => {
          const { offset, length } = merged.append(docIds, tfs, df);
          let cf = 0;
          for (let i = 0; i < df; i++) cf += tfs[i]!;
          rows.push([termId, df, cf, offset, length]);
        });
        expect(merged.close()).toBe(written.sha256);
        expect(readFileSync(mergedPath).equals(readFileSync(path))).toBe(true);
        expect(rows).toEqual(Array.from({ length: lexicon.terms }, (_, t) => [t, lexicon.df[t], lexicon.cf[t], lexicon.offsets[t], lexicon.lengths[t]]));
      }),
      { numRuns: 200 },
    );
  });
});
