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
 */
import type { Impacts } from './impact-blocks.js';

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
    const out = this.bytes;
    let p = this.length;
    while (v >= 0x80) {
      out[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[p++] = v;
    this.length = p;
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

/** The body of `impacts` (throws where its arrays are not what the builders make: values out of order). */
export function encodeImpactsBody(impacts: Impacts): Uint8Array {
  const { firstBlock, lastDoc, gapsAt, tfsAt, firstPair, pairTf, pairLength } = impacts;
  const terms = firstBlock.length - 1;
  const out = new VarintOut(terms * 8 + lastDoc.length * 6 + pairTf.length * 3);
  const delta = (v: number, prev: number, what: string): number => {
    if (v < prev) throw new Error(`impacts: ${what} ${v} after ${prev}`);
    return v - prev;
  };
  for (let t = 0; t < terms; t++) {
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
  return out.bytes.subarray(0, out.length);
}

/**
 * The arrays of a body of `counts`. `bad` makes the error for a body that does not decode to
 * them exactly (cut short, too long, or counts that disagree).
 */
export function decodeImpactsBody(body: Uint8Array, counts: ImpactsCounts, blockSize: number, bad: (why: string) => Error): Impacts {
  const { terms, blocks, pairs } = counts;
  const firstBlock = new Uint32Array(terms + 1);
  const lastDoc = new Uint32Array(blocks);
  const gapsAt = new Uint32Array(blocks);
  const tfsAt = new Uint32Array(blocks);
  const firstPair = new Uint32Array(blocks + 1);
  const pairTf = new Uint32Array(pairs);
  const pairLength = new Uint32Array(pairs);
  const input = new VarintIn(body);
  let b = 0;
  let q = 0;
  for (let t = 0; t < terms; t++) {
    firstBlock[t] = b;
    const n = input.next();
    if (n > blocks - b) throw bad(`termID ${t} has ${n} blocks, past the header's ${blocks}`);
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
      if (m > pairs - q) throw bad(`block ${b} has ${m} pairs, past the header's ${pairs}`);
      for (let i = 0; i < m; i++, q++) {
        pairTf[q] = i === 0 ? input.next() : pairTf[q - 1]! + input.next();
        pairLength[q] = i === 0 ? input.next() : pairLength[q - 1]! + input.next();
      }
    }
  }
  firstBlock[terms] = b;
  firstPair[b] = q;
  if (input.pos > body.length) throw bad(`its body ends inside a record (${body.length} bytes)`);
  if (input.wide) throw bad('a value past 32 bits');
  if (b !== blocks || q !== pairs) throw bad(`its body holds ${b} blocks and ${q} pairs, its header says ${blocks} and ${pairs}`);
  if (input.pos !== body.length) throw bad(`${body.length - input.pos} bytes after the last term's record`);
  return { blockSize, firstBlock, lastDoc, gapsAt, tfsAt, firstPair, pairTf, pairLength };
}
