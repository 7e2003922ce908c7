/**
 * postings.bin straight from one sorted block (the whole crawl in one block: there is nothing
 * to heap-merge), the same bytes mergeRuns and PostingsFileWriter give for its one run. Runs
 * where the block was sorted (the parse worker, indexer/parse-worker.ts), while the main thread
 * writes the lexicon from a PostingsTally.
 */
import { grown } from '../indexer/grown.js';
import { PostingsFileWriter } from './postings-file.js';

export interface SortedBlockPostings {
  sha256: string;
  /** postings.bin's size in bytes. */
  bytes: number;
  terms: number;
  postings: number;
  /** Each term's list length in bytes (termIDs with no pairs: 0), for the check against the tally. */
  lengths: Uint32Array;
}

/** Writes the postings of pairs[0 .. 2*count), sorted by (termID, docID), to a new file at `path`. */
export function writeSortedBlockPostings(sorted: Uint32Array, count: number, path: string): SortedBlockPostings {
  const file = new PostingsFileWriter(path);
  let docIds = new Uint32Array(1024);
  let tfs = new Uint32Array(1024);
  let lengths = new Uint32Array(1024);
  let terms = 0;
  let postings = 0;
  try {
    let i = 0;
    while (i < count) {
      const term = sorted[2 * i]!;
      let df = 0;
      let doc = sorted[2 * i + 1]!;
      let tf = 0;
      for (; i < count && sorted[2 * i] === term; i++) {
        const d = sorted[2 * i + 1]!;
        if (d === doc) {
          tf++;
          continue;
        }
        if (df === docIds.length) [docIds, tfs] = [grown(docIds, df + 1), grown(tfs, df + 1)];
        docIds[df] = doc;
        tfs[df++] = tf;
        doc = d;
        tf = 1;
      }
      if (df === docIds.length) [docIds, tfs] = [grown(docIds, df + 1), grown(tfs, df + 1)];
      docIds[df] = doc;
      tfs[df++] = tf;
      if (term >= lengths.length) lengths = grown(lengths, term + 1);
      lengths[term] = file.append(docIds, tfs, df).length;
      terms++;
      postings += df;
    }
    const sha256 = file.close()!;
    return { sha256, bytes: file.offset, terms, postings, lengths: lengths.slice(0, count > 0 ? sorted[2 * (count - 1)]! + 1 : 0) };
  } catch (err) {
    file.closeQuietly();
    throw err;
  }
}
