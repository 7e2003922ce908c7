/**
 * impacts.bin's body (format 2): each term's blocks as one record of varints, in termID order,
 * so that the bodies of consecutive term ranges concatenate into the body of them all (a merge
 * thread encodes its own range; the main thread only copies bytes). Every value is a count or a
 * difference from the value before it in the same term, so records need no rebasing:
 *
 *   term:  blocks, then each block:
 *   block: lastDoc − the previous block's lastDoc (the first: lastDoc),
 *          gapsAt − the previous block's gapsAt (absent for the first block, whose gapsAt is 0),
 *          tfsAt − the previous block's tfsAt (the first: tfsAt),
 *          pairs, then each pair: tf − the previous pair's tf, length − the previous pair's
 *          length (the first pair: tf, length; pairs ascend in both).
 *
 * Format 1 held the same arrays as u32 columns: 28–32 bytes for a term of one block, which most
 * terms of a real vocabulary are, against 6–9 bytes here.
 *
 * A term index, where the record of every TERM_INDEX_STRIDE-th termID starts, lets a reader
 * decode only the terms a query asks for (decoding all of a 100 M-term body takes seconds). It
 * names termIDs that are multiples of the stride, whatever ranges the body was written in, so
 * the file's bytes do not depend on how the terms were shared between threads.
 */

import type { Impacts, TermImpacts } from './impact-blocks.js';
import { writeVarintU32 } from './varint.js';

/** Terms between two entries of the term index: a lookup skips at most this many records less one. */
export const TERM_INDEX_STRIDE = 64;

/**
 * Where records start in a body: entry i is the record of the i-th termID of the range that is a
 * multiple of TERM_INDEX_STRIDE.
 */
export type TermIndex = Float64Array;

/** The body's counts, as the file's header gives them. */
export interface ImpactsCounts {
  terms: number;
  blocks: number;
  pairs: number;
}

/** A growing byte buffer of varints. */
class VarintOut {
  bytes: Uint8Array<ArrayBuffer>;
  length = 0;
  constructor(capacity: number) {
    this.bytes = new Uint8Array(Math.max(64, capacity));
  }
  put(v: number): void {
    if (this.length + 5 > this.bytes.length) {
      const b = new Uint8Array(this.bytes.length * 2);
      b.set(this.bytes.subarray(0, this.length));
      this.bytes = b;
    }
    this.length = writeVarintU32(this.bytes, this.length, v);
  }
}

/**
 * Varints read in turn. Past the end it reads 0s (undefined bytes), so that the hot loop has no
 * bounds test: a record cut short ends the decode with `pos` past the end, which the caller
 * checks once, as it checks `wide` (a value past 32 bits, from damaged bytes).
 */
class VarintIn {
  pos = 0;
  wide = false;
  constructor(private readonly bytes: Uint8Array) {}
  /** Whether reading has gone past the end (or met a value past 32 bits): what follows is not data. */
  get spent(): boolean {
    return this.pos > this.bytes.length || this.wide;
  }
  next(): number {
    const bytes = this.bytes;
    let v = bytes[this.pos++]!;
    if (v < 0x80) return v;
    v &= 0x7f;
    let scale = 128;
    let byte;
    do {
      byte = bytes[this.pos++]! | 0;
      v += (byte & 0x7f) * scale;
      scale *= 128;
    } while (byte >= 0x80);
    if (v > 0xffffffff) {
      this.wide = true;
      return 0;
    }
    return v;
  }
}

/**
 * The body of `impacts`, whose first term is termID `firstTerm`, and its term index (throws where
 * the arrays are not what the builders make: values out of order).
 */
export function encodeImpactsBody(impacts: Impacts, firstTerm = 0): { body: Uint8Array; index: TermIndex } {
  const { firstBlock, lastDoc, gapsAt, tfsAt, firstPair, pairTf, pairLength } = impacts;
  const terms = firstBlock.length - 1;
  const out = new VarintOut(terms * 8 + lastDoc.length * 6 + pairTf.length * 3);
  const delta = (v: number, prev: number, what: string): number => {
    if (v < prev) throw new Error(`impacts: ${what} ${v} after ${prev}`);
    return v - prev;
  };
  const index = new Float64Array(indexEntries(firstTerm, terms));
  for (let t = 0, e = 0; t < terms; t++) {
    if ((firstTerm + t) % TERM_INDEX_STRIDE === 0) index[e++] = out.length;
    const first = firstBlock[t]!;
    const end = firstBlock[t + 1]!;
    out.put(end - first);
    for (let b = first; b < end; b++) {
      if (b === first) {
        if (gapsAt[b] !== 0) throw new Error(`impacts: termID ${t}'s first block starts at ${gapsAt[b]}, not 0`);
        out.put(lastDoc[b]!);
        out.put(tfsAt[b]!);
      } else {
        out.put(delta(lastDoc[b]!, lastDoc[b - 1]!, 'lastDoc'));
        out.put(delta(gapsAt[b]!, gapsAt[b - 1]!, 'gapsAt'));
        out.put(delta(tfsAt[b]!, tfsAt[b - 1]!, 'tfsAt'));
      }
      const p0 = firstPair[b]!;
      const p1 = firstPair[b + 1]!;
      out.put(p1 - p0);
      for (let q = p0; q < p1; q++) {
        out.put(q === p0 ? pairTf[q]! : delta(pairTf[q]!, pairTf[q - 1]!, 'pair tf'));
        out.put(q === p0 ? pairLength[q]! : delta(pairLength[q]!, pairLength[q - 1]!, 'pair length'));
      }
    }
  }
  return { body: out.bytes.subarray(0, out.length), index };
}

/** Entries of the term index of `terms` terms from termID `firstTerm`: the multiples of the stride among them. */
export function indexEntries(firstTerm: number, terms: number): number {
  return Math.ceil((firstTerm + terms) / TERM_INDEX_STRIDE) - Math.ceil(firstTerm / TERM_INDEX_STRIDE);
}

/** The arrays a record decodes into (Impacts' but firstBlock). */
type BlockArrays = Omit<Impacts, 'blockSize' | 'firstBlock' | 'format'>;

function blockArrays(blocks: number, pairs: number): BlockArrays {
  return {
    lastDoc: new Uint32Array(blocks),
    gapsAt: new Uint32Array(blocks),
    tfsAt: new Uint32Array(blocks),
    firstPair: new Uint32Array(blocks + 1),
    pairTf: new Uint32Array(pairs),
    pairLength: new Uint32Array(pairs),
  };
}

/**
 * Decodes a record's `n` blocks (its block count read already) into `a` from block `b` and pair
 * `q`; returns the pair after its last. A block of more pairs than `pairsEnd - q` is an error.
 */
function decodeBlocks(input: VarintIn, n: number, a: BlockArrays, b: number, q: number, pairsEnd: number, bad: (why: string) => Error): number {
  const { lastDoc, gapsAt, tfsAt, firstPair, pairTf, pairLength } = a;
  for (let k = 0; k < n; k++, b++) {
    if (k === 0) {
      lastDoc[b] = input.next();
      tfsAt[b] = input.next();
    } else {
      lastDoc[b] = lastDoc[b - 1]! + input.next();
      gapsAt[b] = gapsAt[b - 1]! + input.next();
      tfsAt[b] = tfsAt[b - 1]! + input.next();
    }
    firstPair[b] = q;
    const m = input.next();
    if (m > pairsEnd - q) throw bad(`block ${b} has ${m} pairs, past the ${pairsEnd} there are`);
    for (let i = 0; i < m; i++, q++) {
      pairTf[q] = i === 0 ? input.next() : pairTf[q - 1]! + input.next();
      pairLength[q] = i === 0 ? input.next() : pairLength[q - 1]! + input.next();
    }
  }
  return q;
}

/** Reads past one record; returns its blocks and pairs. */
function skipRecord(input: VarintIn): { blocks: number; pairs: number } {
  const blocks = input.next();
  let pairs = 0;
  // Damaged counts end with the bytes: past them every value reads 0.
  for (let k = 0; k < blocks && !input.spent; k++) {
    input.next();
    if (k > 0) input.next();
    input.next();
    const m = input.next();
    pairs += m;
    for (let i = 0; i < 2 * m && !input.spent; i++) input.next();
  }
  return { blocks, pairs };
}

/**
 * The arrays of a body of `counts` (its first term termID 0). `bad` makes the error for a body
 * that does not decode to them exactly (cut short, too long, counts that disagree, or a term
 * index entry that is not where its term's record starts).
 */
export function decodeImpactsBody(body: Uint8Array, counts: ImpactsCounts, blockSize: number, bad: (why: string) => Error, index?: TermIndex): Impacts {
  const { terms, blocks, pairs } = counts;
  const firstBlock = new Uint32Array(terms + 1);
  const a = blockArrays(blocks, pairs);
  const input = new VarintIn(body);
  let b = 0;
  let q = 0;
  for (let t = 0; t < terms; t++) {
    firstBlock[t] = b;
    if (index && t % TERM_INDEX_STRIDE === 0 && index[t / TERM_INDEX_STRIDE] !== input.pos) throw bad(`its term index puts termID ${t} at byte ${index[t / TERM_INDEX_STRIDE]}, its record starts at ${input.pos}`);
    const n = input.next();
    if (n > blocks - b) throw bad(`termID ${t} has ${n} blocks, past the header's ${blocks}`);
    q = decodeBlocks(input, n, a, b, q, pairs, bad);
    b += n;
  }
  firstBlock[terms] = b;
  a.firstPair[b] = q;
  if (input.pos > body.length) throw bad(`its body ends inside a record (${body.length} bytes)`);
  if (input.wide) throw bad('a value past 32 bits');
  if (b !== blocks || q !== pairs) throw bad(`its body holds ${b} blocks and ${q} pairs, its header says ${blocks} and ${pairs}`);
  if (input.pos !== body.length) throw bad(`${body.length - input.pos} bytes after the last term's record`);
  return { blockSize, firstBlock, ...a };
}

/**
 * One term's blocks from a body: the record at `offset` is that of term `from`, and term `termId`
 * (>= from) is `termId - from` records on. Its arrays are the term's alone (first 0).
 */
export function decodeTermRecord(body: Uint8Array, offset: number, from: number, termId: number, blockSize: number, bad: (why: string) => Error): TermImpacts {
  const input = new VarintIn(body);
  input.pos = offset;
  for (let t = from; t < termId && !input.spent; t++) skipRecord(input);
  const start = input.pos;
  // Counted first, so that the arrays are allocated once, at their size.
  const { blocks, pairs } = skipRecord(input);
  if (input.pos > body.length || input.wide) throw bad(`its body ends inside termID ${termId}'s record, or it holds a value past 32 bits`);
  input.pos = start;
  input.next();
  const a = blockArrays(blocks, pairs);
  a.firstPair[blocks] = decodeBlocks(input, blocks, a, 0, 0, pairs, bad);
  return { blockSize, first: 0, end: blocks, ...a };
}
