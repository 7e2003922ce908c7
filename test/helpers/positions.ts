/** Reads an index's positions.bin back as term -> docID -> positions, and the same from a naive token scan. */
import { join } from 'node:path';
import { expect } from 'vitest';
import { openIndex } from '../../src/reader.js';
import { PositionsFile } from '../../merge/positions-file.js';
import { createTokenizer, type TokenizerOptions } from '../../indexer/analysis/tokenizer.js';

export type PositionMap = Map<string, Map<number, number[]>>;

/** Every term's positions in every document, as positions.bin holds them beside postings.bin's lists. */
export function readPositions(dir: string): { positions: PositionMap; titleLengths: number[] } {
  const reader = openIndex(dir);
  const file = new PositionsFile(join(dir, 'positions.bin'));
  try {
    const positions: PositionMap = new Map();
    expect(file.documents).toBe(reader.stats().documents);
    expect(file.terms).toBe(reader.stats().terms);
    for (const e of reader.lexicon()) {
      const { docIds, tfs } = reader.readList(e);
      const cursor = file.cursor(e.termId, { docIds, tfs });
      const byDoc = new Map<number, number[]>();
      for (let i = 0; i < docIds.length; i++) {
        const p = Array.from(cursor.positionsOf(i));
        expect(p.length).toBeLessThanOrEqual(tfs[i]!);
        byDoc.set(docIds[i]!, p);
      }
      expect(cursor.atEnd).toBe(true);
      positions.set(e.term, byDoc);
    }
    return { positions, titleLengths: Array.from(file.titleLengths) };
  } finally {
    file.close();
    reader.close();
  }
}

/** The terms of each document's title and text as the tokenizer gives them (stopwords dropped). */
export function tokenStreams(docs: readonly { title?: string; text: string }[], options: TokenizerOptions): { title: string[]; text: string[] }[] {
  const tokenizer = createTokenizer(options);
  return docs.map((d) => {
    const title: string[] = [];
    const text: string[] = [];
    if (d.title) tokenizer.tokenize(d.title, (t) => title.push(t));
    tokenizer.tokenize(d.text, (t) => text.push(t));
    return { title, text };
  });
}

/** The positions a naive scan of the token streams gives: title 0 .. L−1, text from L + 1 (0 without a title). */
export function naivePositions(streams: readonly { title: string[]; text: string[] }[]): { positions: PositionMap; titleLengths: number[]; ends: number[] } {
  const positions: PositionMap = new Map();
  const add = (term: string, doc: number, p: number) => {
    let byDoc = positions.get(term);
    if (!byDoc) positions.set(term, (byDoc = new Map()));
    let list = byDoc.get(doc);
    if (!list) byDoc.set(doc, (list = []));
    list.push(p);
  };
  streams.forEach((s, doc) => {
    s.title.forEach((t, i) => add(t, doc, i));
    const start = s.title.length === 0 ? 0 : s.title.length + 1;
    s.text.forEach((t, i) => add(t, doc, start + i));
  });
  // A document's bound: one past its last position (at least 1), counted from its tokens.
  const ends = streams.map((s) => Math.max(1, s.title.length === 0 ? s.text.length : s.title.length + 1 + s.text.length));
  return { positions, titleLengths: streams.map((s) => s.title.length), ends };
}

/** Maps compared as sorted entries (toEqual on Maps ignores nothing, but sorted arrays give a readable diff). */
export function sortedEntries(m: PositionMap): [string, [number, number[]][]][] {
  return [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([t, byDoc]) => [t, [...byDoc.entries()].sort(([a], [b]) => a - b)]);
}

/**
 * positions.bin format 2 (merge/positions-file.ts) written naively from term -> docID -> positions:
 * the header, the title lengths, each term's postings in termID order (`termsInIdOrder`), docIDs
 * ascending, positions as LEB128 gaps, then the (T + 1) u64 term starts.
 */
export function naivePositionsFile(positions: PositionMap, titleLengths: readonly number[], termsInIdOrder: readonly string[], titleWeight: number): Buffer {
  const bytes: number[] = [];
  const u32 = (v: number) => bytes.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24);
  for (const c of 'GPIXPOS2') bytes.push(c.charCodeAt(0));
  u32(titleLengths.length);
  u32(termsInIdOrder.length);
  u32(titleWeight);
  u32(0);
  for (const l of titleLengths) u32(l);
  const starts: number[] = [];
  for (const term of termsInIdOrder) {
    starts.push(bytes.length);
    const byDoc = positions.get(term);
    if (!byDoc) throw new Error(`naive positions: no term "${term}"`);
    for (const doc of [...byDoc.keys()].sort((a, b) => a - b)) {
      let last = 0;
      for (const p of byDoc.get(doc)!) {
        for (let gap = p - last; ; gap = Math.floor(gap / 128)) {
          if (gap < 0x80) {
            bytes.push(gap);
            break;
          }
          bytes.push((gap & 0x7f) | 0x80);
        }
        last = p;
      }
    }
  }
  starts.push(bytes.length);
  const table = Buffer.alloc(8 * starts.length);
  starts.forEach((s, t) => table.writeBigUInt64LE(BigInt(s), 8 * t));
  return Buffer.concat([Buffer.from(bytes), table]);
}

/**
 * positions.bin format 3 (merge/positions-file.ts) written naively, a bit at a time, from term ->
 * docID -> positions: the header, title lengths and bounds as varints, each term's postings in
 * termID order, docIDs ascending, each gap a Rice code of parameter ⌊log2 ⌊E / tf⌋⌋ (an escape
 * for a quotient of 32 or more), each term padded to a byte, the terms' lengths as varints, then
 * where those start.
 */
export function naivePositionsFileV3(positions: PositionMap, titleLengths: readonly number[], ends: readonly number[], termsInIdOrder: readonly string[], titleWeight: number): Buffer {
  const bytes: number[] = [];
  const u32 = (v: number) => bytes.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24);
  const varint = (v: number) => {
    for (; v >= 0x80; v = Math.floor(v / 128)) bytes.push((v & 0x7f) | 0x80);
    bytes.push(v);
  };
  for (const c of 'GPIXPOS3') bytes.push(c.charCodeAt(0));
  u32(titleLengths.length);
  u32(termsInIdOrder.length);
  u32(titleWeight);
  u32(0);
  for (const l of titleLengths) varint(l);
  for (const e of ends) varint(e);
  const termLengths: number[] = [];
  for (const term of termsInIdOrder) {
    const byDoc = positions.get(term);
    if (!byDoc) throw new Error(`naive positions: no term "${term}"`);
    const bits: number[] = [];
    const low = (v: number, n: number) => {
      for (let i = 0; i < n; i++) bits.push(Math.floor(v / 2 ** i) % 2);
    };
    for (const doc of [...byDoc.keys()].sort((a, b) => a - b)) {
      const list = byDoc.get(doc)!;
      const tf = list.reduce((sum, p) => sum + (p < titleLengths[doc]! ? titleWeight : 1), 0);
      let k = 0;
      while (2 ** (k + 1) <= Math.floor(ends[doc]! / tf)) k++;
      let last = 0;
      for (const p of list) {
        const gap = p - last;
        last = p;
        const q = Math.floor(gap / 2 ** k);
        if (q >= 32) {
          for (let i = 0; i < 32; i++) bits.push(1);
          low(gap, 32);
          continue;
        }
        for (let i = 0; i < q; i++) bits.push(1);
        bits.push(0);
        low(gap, k);
      }
    }
    while (bits.length % 8) bits.push(0);
    for (let i = 0; i < bits.length; i += 8) bytes.push(bits.slice(i, i + 8).reduce((b, bit, j) => b | (bit << j), 0));
    termLengths.push(bits.length / 8);
  }
  const tableAt = bytes.length;
  for (const l of termLengths) varint(l);
  const footer = Buffer.alloc(8);
  footer.writeBigUInt64LE(BigInt(tableAt), 0);
  return Buffer.concat([Buffer.from(bytes), footer]);
}
