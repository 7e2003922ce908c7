/**
 * postings.bin straight from a block in docID order, without sorting it: for a crawl that fitted
 * in one block, whose lexicon a PostingsTally counted during the fill (merge/postings-tally.ts).
 * The tally knows each term's list length and how many of those bytes are docID gaps, so every
 * list's place in the file, and where its tfs start, are known before the first pair is read:
 * one pass over the pairs writes each posting's gap at its term's gap cursor and, once the
 * posting's tf is final (the term's next posting, or the end), the tf at its tf cursor.
 *
 * This replaced a radix sort of the block and a pass over the sorted pairs (mail: 2.2 M pairs,
 * 85 + 55 ms on the parse worker, 2-core machine). The bytes are the
 * ones the heap merge of the block as one sorted run gives (test/postings-tally.test.ts).
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import type { DocBases } from '../src/shared/types.js';
import { POSTINGS_MAGIC } from './postings-file.js';
import { writeVarintU32 } from './varint.js';
import type { TalliedLexicon } from './postings-tally.js';
import { impactsOfLists, type Impacts } from './impact-blocks.js';

/** Where each term's list goes: what PostingsTally.finish() counted. */
export interface PostingsLayout {
  /** Byte length of each term's list (termIDs with no pairs: 0). */
  lengths: Uint32Array;
  /** Byte length of the docID gaps at the start of each term's list. */
  gapBytes: Uint32Array;
  /** The lists' order in the file (TermDictionary.order); by default termID order. */
  order?: Uint32Array;
  /** Each term's document frequency: with it (and the documents' lengths) the lists' impacts are computed too. */
  df?: Uint32Array;
}

/** What writeDocOrderPostings wrote. */
/** The lexicon's figures, known now, and the postings.bin the parse worker is writing meanwhile. */
export interface BlockPostings {
  lexicon: TalliedLexicon;
  /** Settles once postings.bin is written (and, on a failure, the parse workers are closed). */
  written: Promise<WrittenPostings>;
  /**
   * Resolves once the parse workers are closed, which on success follows `written`: the index
   * is finished meanwhile (terminating the worker took 10-20 ms of mail's tail before).
   */
  closed: Promise<void>;
}

export interface WrittenPostings {
  sha256: string;
  /** postings.bin's size in bytes. */
  bytes: number;
  /** Terms with a list. */
  terms: number;
  postings: number;
  /** impacts.bin's contents, in the file's list order (one part, or a part a thread), where the layout had df and the lengths were given. */
  impacts?: Impacts[];
}

/**
 * Cursors are 32-bit. A block holds at most MAX_BLOCK_PAIRS (2^28) pairs, and a posting of k
 * pairs takes at most 5 + k bytes (a docID gap of up to 5, a tf of up to k), so a block's
 * postings stay under 6 * 2^28 bytes: this bound is never reached by a build.
 */
const MAX_FILE_BYTES = 0xffffffff;

/** postings.bin's size for `layout`, header included. */
function fileBytesOf(layout: PostingsLayout): number {
  let bytes = POSTINGS_MAGIC.length;
  for (let t = 0; t < layout.lengths.length; t++) bytes += layout.lengths[t]!;
  return bytes;
}

/** Words per term of the cursor table: last docID + 1 (0: none yet), its tf, gap cursor, tf cursor. */
const STRIDE = 4;

/** Lists [from, to) in the file's order: the part of postings.bin one thread writes. */
export interface PostingsPart {
  from: number;
  to: number;
}

/** A part written (writeDocOrderPostingsPart): where it lies in the file, its bytes, its figures. */
export interface WrittenPart {
  offset: number;
  /** The part's bytes (for the file's hash, taken in order by the caller). */
  bytes: Uint8Array;
  terms: number;
  postings: number;
  impacts?: Impacts;
}

/**
 * Cuts the file's lists into `parts` parts of about equal bytes, for as many threads: each
 * writes its part from the whole block (reading every pair, writing only its lists' postings).
 */
export function postingsParts(layout: PostingsLayout, parts: number): PostingsPart[] {
  const terms = layout.lengths.length;
  const total = fileBytesOf(layout);
  const out: PostingsPart[] = [];
  let from = 0;
  for (let p = 0, at = POSTINGS_MAGIC.length; p < terms && out.length < parts - 1; p++) {
    at += layout.lengths[layout.order ? layout.order[p]! : p]!;
    if (at >= ((out.length + 1) * total) / parts) {
      out.push({ from, to: p + 1 });
      from = p + 1;
    }
  }
  out.push({ from, to: terms });
  return out;
}

/**
 * Writes the postings of pairs[0 .. 2*count) (termID, document index; each docBases segment's
 * base added to its pairs' indexes, as PairSorter.sortBlock) to a new file at `path`. The pairs
 * must be in docID order, with their termIDs below layout.lengths.length. `buffer` is used for
 * the file's bytes when large enough (the sort scratch, whose pages the fill touched already).
 * Throws if the pairs do not give exactly the layout's lengths. With layout.df and `lengths` (the
 * documents' lengths by docID) it also computes the lists' impacts from the bytes in memory: the
 * build has nothing else to do meanwhile, and a later pass would read the file back on threads
 * started for it.
 */
export function writeDocOrderPostings(pairs: Uint32Array, count: number, docBases: DocBases, layout: PostingsLayout, path: string, buffer?: ArrayBuffer, lengths?: Uint32Array): WrittenPostings {
  const part = docOrderPart(pairs, count, docBases, layout, { from: 0, to: layout.lengths.length }, path, buffer, lengths);
  const fd = openSync(path, 'wx');
  try {
    writeAll(fd, part.bytes, 0);
  } finally {
    closeSync(fd);
  }
  const sha256 = createHash('sha256').update(part.bytes).digest('hex');
  return { sha256, bytes: part.bytes.length, terms: part.terms, postings: part.postings, ...(part.impacts ? { impacts: [part.impacts] } : {}) };
}

/**
 * One part of writeDocOrderPostings' file, written at its place in `path` (which the caller
 * created): several threads write the parts of one file at once, from the same block (a
 * SharedArrayBuffer). Each reads every pair and writes only its own lists.
 */
export function writeDocOrderPostingsPart(pairs: Uint32Array, count: number, docBases: DocBases, layout: PostingsLayout, part: PostingsPart, path: string, buffer?: ArrayBuffer, lengths?: Uint32Array): WrittenPart {
  const written = docOrderPart(pairs, count, docBases, layout, part, path, buffer, lengths);
  const fd = openSync(path, 'r+');
  try {
    writeAll(fd, written.bytes, written.offset);
  } finally {
    closeSync(fd);
  }
  return written;
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off, position + off);
}

/** Lists [part.from, part.to) in memory: the scatter of the pairs, the checks, and the impacts. */
function docOrderPart(pairs: Uint32Array, count: number, docBases: DocBases, layout: PostingsLayout, part: PostingsPart, path: string, buffer?: ArrayBuffer, lengths?: Uint32Array): WrittenPart {
  const terms = layout.lengths.length;
  const fileBytes = fileBytesOf(layout);
  if (fileBytes > MAX_FILE_BYTES) throw new RangeError(`postings of ${fileBytes} bytes do not fit 32-bit cursors`);
  const order = layout.order;
  if (order && order.length !== terms) throw new RangeError(`the layout orders ${order.length} terms, it has ${terms}`);
  const termAt = (p: number): number => (order ? order[p]! : p);
  // The part's place in the file: its first list's offset (the header goes with the first part).
  let offset = POSTINGS_MAGIC.length;
  for (let p = 0; p < part.from; p++) offset += layout.lengths[termAt(p)]!;
  let end = offset;
  for (let p = part.from; p < part.to; p++) end += layout.lengths[termAt(p)]!;
  if (part.from === 0) offset = 0;
  const size = end - offset;
  const out = buffer !== undefined && buffer.byteLength >= size ? new Uint8Array(buffer, 0, size) : new Uint8Array(size);
  if (part.from === 0) out.set(POSTINGS_MAGIC, 0);
  // Cursors are relative to the part's start. Which terms are this part's: one byte a term, so
  // that the pairs of other parts' terms (read by every part) touch no cursor.
  const cursors = new Uint32Array(STRIDE * terms);
  const mine = new Uint8Array(terms);
  for (let p = part.from, at = part.from === 0 ? POSTINGS_MAGIC.length : 0; p < part.to; p++) {
    const t = termAt(p);
    mine[t] = 1;
    cursors[STRIDE * t + 2] = at;
    cursors[STRIDE * t + 3] = at + layout.gapBytes[t]!;
    at += layout.lengths[t]!;
  }

  let postings = 0;
  // Segment k covers pairs [docBases[k], docBases[k + 2]) with base docBases[k + 1]; pairs
  // before the first segment have base 0.
  let from = 0;
  for (let k = -2; k < docBases.length; k += 2) {
    const base = k < 0 ? 0 : docBases[k + 1]!;
    const segmentEnd = k + 2 < docBases.length ? Math.min(docBases[k + 2]!, count) : count;
    for (let i = from; i < segmentEnd; i++) {
      const t = pairs[2 * i]!;
      if (t >= terms) throw new RangeError(`pair ${i}: termID ${t} is not in the layout's ${terms} terms`);
      if (mine[t] === 0) continue;
      const r = STRIDE * t;
      const d = base + pairs[2 * i + 1]!;
      const last = cursors[r]!;
      if (last === d + 1) {
        cursors[r + 1]!++;
        continue;
      }
      if (d + 1 < last) throw new RangeError(`pair ${i}: docID ${d} of termID ${t} follows docID ${last - 1} (the block must be in docID order)`);
      // The previous posting's tf is final; the gap from its docID (the first gap is the docID).
      if (last !== 0) cursors[r + 3] = writeVarintU32(out, cursors[r + 3]!, cursors[r + 1]!);
      cursors[r + 2] = writeVarintU32(out, cursors[r + 2]!, last === 0 ? d : d - (last - 1));
      cursors[r] = d + 1;
      cursors[r + 1] = 1;
      postings++;
    }
    if (segmentEnd > from) from = segmentEnd;
  }

  // The last posting of every list, then the check that each list filled exactly its place.
  let present = 0;
  for (let p = part.from, at = part.from === 0 ? POSTINGS_MAGIC.length : 0; p < part.to; p++) {
    const t = termAt(p);
    const r = STRIDE * t;
    if (cursors[r] !== 0) {
      present++;
      cursors[r + 3] = writeVarintU32(out, cursors[r + 3]!, cursors[r + 1]!);
    }
    const length = layout.lengths[t]!;
    if (cursors[r + 2] !== at + layout.gapBytes[t]! || cursors[r + 3] !== at + length)
      throw new Error(`termID ${t}: its list took ${cursors[r + 2]! - at} gap bytes and ${cursors[r + 3]! - at} in all, the layout says ${layout.gapBytes[t]} and ${length}`);
    at += length;
  }

  const df = layout.df;
  if (!df || !lengths) return { offset, bytes: out, terms: present, postings };
  // After the pass each gap cursor is at its list's start plus its gap bytes.
  const impacts = impactsOfLists(
    {
      terms: part.to - part.from,
      df: (i) => df[termAt(part.from + i)]!,
      length: (i) => layout.lengths[termAt(part.from + i)]!,
      locate: (i) => cursors[STRIDE * termAt(part.from + i) + 2]! - layout.gapBytes[termAt(part.from + i)]!,
      bytes: () => out,
      describe: (i) => `${path}: the list of termID ${part.from + i}`,
    },
    lengths,
  );
  return { offset, bytes: out, terms: present, postings, impacts };
}
