/**
 * Postings list encoding: for a list of df postings,
 *   df varints of docID gaps (the first gap is the docID itself), then df varints of term frequencies.
 * Gaps and tfs are kept apart so a block codec can replace either column later.
 */
import { readVarint, writeVarintU32 } from './varint.js';

/** Upper bound of the encoded size of a list of df postings. */
export const maxEncodedBytes = (df: number): number => df * 10;

/** Encodes into out[pos..]; returns the new position. */
export function encodePostings(docIds: Uint32Array, tfs: Uint32Array, df: number, out: Uint8Array, pos: number): number {
  // The merge spends most of its time here: writeVarintU32 is inlined by TurboFan (200,000 lists
  // in a harness, 11.0-11.2 ms with the loop written out here, 11.0-11.4 ms with the call).
  let prev = 0;
  for (let i = 0; i < df; i++) {
    const d = docIds[i]!;
    pos = writeVarintU32(out, pos, d - prev);
    prev = d;
  }
  for (let i = 0; i < df; i++) pos = writeVarintU32(out, pos, tfs[i]!);
  return pos;
}

export interface DecodedPostings {
  docIds: Uint32Array;
  tfs: Uint32Array;
}

/** Decodes a list of df postings from bytes (exactly one list). */
export function decodePostings(bytes: Uint8Array, df: number): DecodedPostings {
  const docIds = new Uint32Array(df);
  const tfs = new Uint32Array(df);
  let pos = 0;
  let doc = 0;
  let v: number;
  for (let i = 0; i < df; i++) {
    [v, pos] = readVarint(bytes, pos);
    doc += v;
    docIds[i] = doc;
  }
  for (let i = 0; i < df; i++) {
    [v, pos] = readVarint(bytes, pos);
    tfs[i] = v;
  }
  if (pos !== bytes.length) throw new RangeError(`postings list has ${bytes.length - pos} trailing bytes`);
  return { docIds, tfs };
}
