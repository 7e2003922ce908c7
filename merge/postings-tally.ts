/**
 * The lexicon's per-term figures (df, cf, and the byte length of the encoded postings list,
 * postings-codec.ts) tallied while pairs arrive in docID order, before anything is sorted: with
 * them the lexicon rows can go into index.sqlite while the block is still being sorted and its
 * postings written elsewhere (the parse worker: worker-pipeline.ts, write-index.ts
 * writeIndexFromTally). The writer of the postings returns the real lengths, and they are
 * checked against these.
 */
import { grown } from '../runtime/grown.js';
import { POSTINGS_MAGIC } from './postings-file.js';
import { varintBytes } from './varint.js';

export interface TalliedLexicon {
  /** Terms 0 .. terms-1. */
  terms: number;
  df: Uint32Array;
  cf: Uint32Array;
  /** Byte length of each term's encoded list. */
  lengths: Uint32Array;
  /** Byte length of the docID gaps that open each term's list (its tfs follow them). */
  gapBytes: Uint32Array;
  /** Where each term's list starts in postings.bin (after its magic), indexed by termID. */
  offsets: Float64Array;
  postings: number;
  postingsBytes: number;
}

/** Words per term in PostingsTally's table: the last docID + 1 (0: none yet), that open posting's tf, df, gap bytes. */
const STRIDE = 4;

export class PostingsTally {
  /**
   * One row of STRIDE words per term, so a pair touches one cache line (five separate arrays
   * cost mail's main thread ~47 ms a build against ~20, perf). cf and the tf bytes are added
   * once a posting (when its tf is final), not once a pair, in a second table of two words a
   * term (cf, tf bytes): the gaps and the tfs are two columns of a list (postings-codec.ts),
   * and merge/doc-order-postings.ts needs to know where the tfs start.
   */
  private rows = new Uint32Array(STRIDE << 12);
  private closed = new Uint32Array(2 << 12);
  private terms = 0;

  /** Bytes of its arrays (for the memory estimate: they grow with the vocabulary). */
  get byteLength(): number {
    return this.rows.byteLength + this.closed.byteLength;
  }

  /**
   * Counts pairs [from, from + count) of `pairs` (interleaved termID, document index), whose
   * document indexes are numbered from docBase; calls must come in docID order.
   */
  add(pairs: Uint32Array, from: number, count: number, docBase: number): void {
    let rows = this.rows;
    let closed = this.closed;
    let terms = this.terms;
    for (let i = 2 * from, end = 2 * (from + count); i < end; i += 2) {
      const t = pairs[i]!;
      if (t >= terms) {
        // Stored here, not after the loop: V8 optimizes this loop while the first call runs,
        // and a store after it, not yet run then, sent every later call back to the
        // interpreter as the loop ended (24 times on mail).
        this.terms = terms = t + 1;
        if (STRIDE * terms > rows.length) {
          this.rows = rows = grown(rows, STRIDE * terms);
          this.closed = closed = grown(closed, 2 * terms);
        }
      }
      const r = STRIDE * t;
      const d = docBase + pairs[i + 1]!;
      const last = rows[r]!;
      if (last === d + 1) {
        rows[r + 1]!++;
        continue;
      }
      // A new posting: the previous one's tf is final; the gap from the previous docID (the
      // first gap is the docID itself).
      if (last !== 0) {
        const tf = rows[r + 1]!;
        closed[2 * t]! += tf;
        closed[2 * t + 1]! += varintBytes(tf);
      }
      rows[r] = d + 1;
      rows[r + 1] = 1;
      rows[r + 2]!++;
      rows[r + 3]! += varintBytes(last === 0 ? d : d - (last - 1));
    }
  }

  /**
   * The figures of every term seen (closing each list's last posting); the tally is spent.
   * `order` (TermDictionary.order): the lists' order in postings.bin, by default termID order.
   */
  finish(order?: Uint32Array): TalliedLexicon {
    const n = this.terms;
    const { rows, closed } = this;
    const df = new Uint32Array(n);
    const cf = new Uint32Array(n);
    const lengths = new Uint32Array(n);
    const gapBytes = new Uint32Array(n);
    const offsets = new Float64Array(n);
    let at = POSTINGS_MAGIC.length;
    let postings = 0;
    for (let t = 0; t < n; t++) {
      const r = STRIDE * t;
      let tfBytes = closed[2 * t + 1]!;
      cf[t] = closed[2 * t]!;
      if (rows[r] !== 0) {
        tfBytes += varintBytes(rows[r + 1]!);
        cf[t]! += rows[r + 1]!;
      }
      df[t] = rows[r + 2]!;
      gapBytes[t] = rows[r + 3]!;
      lengths[t] = gapBytes[t]! + tfBytes;
      postings += df[t]!;
    }
    for (let p = 0; p < n; p++) {
      const t = order ? order[p]! : p;
      offsets[t] = at;
      at += lengths[t]!;
    }
    this.rows = new Uint32Array(0);
    this.closed = new Uint32Array(0);
    return { terms: n, df, cf, lengths, gapBytes, offsets, postings, postingsBytes: at };
  }
}
