/**
 * The lexicon's per-term figures (df, cf, and the byte length of the encoded postings list,
 * postings-codec.ts) tallied while pairs arrive in docID order, before anything is sorted: with
 * them the lexicon rows can go into index.sqlite while the block is still being sorted and its
 * postings written elsewhere (the parse worker: worker-pipeline.ts, write-index.ts
 * writeIndexFromTally). The writer of the postings returns the real lengths, and they are
 * checked against these.
 */
import { grown } from '../indexer/grown.js';
import { POSTINGS_MAGIC } from './postings-file.js';

/** Bytes of v as a varint (v < 2^32). */
const varintBytes = (v: number): number => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);

export interface TalliedLexicon {
  /** Terms 0 .. terms-1. */
  terms: number;
  df: Uint32Array;
  cf: Uint32Array;
  /** Byte length of each term's encoded list. */
  lengths: Uint32Array;
  /** Where each term's list starts in postings.bin (after its magic), in termID order. */
  offsets: Float64Array;
  postings: number;
  postingsBytes: number;
}

export class PostingsTally {
  private df = new Uint32Array(1 << 12);
  private cf = new Uint32Array(1 << 12);
  private bytes = new Uint32Array(1 << 12);
  /** The term's last docID + 1 (0: none yet) and the tf of that last posting, still open. */
  private lastDoc = new Uint32Array(1 << 12);
  private tf = new Uint32Array(1 << 12);
  private terms = 0;

  /** Bytes of its arrays (for the memory estimate: they grow with the vocabulary). */
  get byteLength(): number {
    return 5 * 4 * this.df.length;
  }

  /**
   * Counts pairs [from, from + count) of `pairs` (interleaved termID, document index), whose
   * document indexes are numbered from docBase; calls must come in docID order.
   */
  add(pairs: Uint32Array, from: number, count: number, docBase: number): void {
    let { df, cf, bytes, lastDoc, tf } = this;
    for (let i = 2 * from, end = 2 * (from + count); i < end; i += 2) {
      const t = pairs[i]!;
      if (t >= df.length) {
        this.growTo(t + 1);
        ({ df, cf, bytes, lastDoc, tf } = this);
      }
      if (t >= this.terms) this.terms = t + 1;
      const d = docBase + pairs[i + 1]!;
      const last = lastDoc[t]!;
      if (last !== d + 1) {
        // A new posting: the previous one's tf is final; the gap from the previous docID
        // (the first gap is the docID itself).
        if (last !== 0) bytes[t]! += varintBytes(tf[t]!);
        bytes[t]! += varintBytes(last === 0 ? d : d - (last - 1));
        lastDoc[t] = d + 1;
        tf[t] = 1;
        df[t]!++;
      } else tf[t]!++;
      cf[t]!++;
    }
  }

  private growTo(need: number): void {
    const keep = this.df.length;
    this.df = grown(this.df, need, keep);
    this.cf = grown(this.cf, need, keep);
    this.bytes = grown(this.bytes, need, keep);
    this.lastDoc = grown(this.lastDoc, need, keep);
    this.tf = grown(this.tf, need, keep);
  }

  /** The figures of every term seen (closing each list's last posting); the tally is spent. */
  finish(): TalliedLexicon {
    const n = this.terms;
    const lengths = this.bytes.subarray(0, n);
    const offsets = new Float64Array(n);
    let at = POSTINGS_MAGIC.length;
    let postings = 0;
    for (let t = 0; t < n; t++) {
      if (this.lastDoc[t] !== 0) lengths[t]! += varintBytes(this.tf[t]!);
      offsets[t] = at;
      at += lengths[t]!;
      postings += this.df[t]!;
    }
    return { terms: n, df: this.df.subarray(0, n), cf: this.cf.subarray(0, n), lengths, offsets, postings, postingsBytes: at };
  }
}
