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
  /** impacts.bin's contents, in the file's list order, where the layout had df and the lengths were given. */
  impacts?: Impacts;
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
  const terms = layout.lengths.length;
  const fileBytes = fileBytesOf(layout);
  if (fileBytes > MAX_FILE_BYTES) throw new RangeError(`postings of ${fileBytes} bytes do not fit 32-bit cursors`);
  const out = buffer !== undefined && buffer.byteLength >= fileBytes ? new Uint8Array(buffer, 0, fileBytes) : new Uint8Array(fileBytes);
  out.set(POSTINGS_MAGIC, 0);
  const cursors = new Uint32Array(STRIDE * terms);
  const order = layout.order;
  if (order && order.length !== terms) throw new RangeError(`the layout orders ${order.length} terms, it has ${terms}`);
  for (let p = 0, at = POSTINGS_MAGIC.length; p < terms; p++) {
    const t = order ? order[p]! : p;
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
    const end = k + 2 < docBases.length ? Math.min(docBases[k + 2]!, count) : count;
    for (let i = from; i < end; i++) {
      const t = pairs[2 * i]!;
      const d = base + pairs[2 * i + 1]!;
      if (t >= terms) throw new RangeError(`pair ${i}: termID ${t} is not in the layout's ${terms} terms`);
      const r = STRIDE * t;
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
    if (end > from) from = end;
  }

  // The last posting of every list, then the check that each list filled exactly its place.
  let present = 0;
  for (let p = 0, at = POSTINGS_MAGIC.length; p < terms; p++) {
    const t = order ? order[p]! : p;
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

  const fd = openSync(path, 'wx');
  try {
    for (let off = 0; off < fileBytes; ) off += writeSync(fd, out, off, fileBytes - off);
  } finally {
    closeSync(fd);
  }
  const sha256 = createHash('sha256').update(out).digest('hex');
  const df = layout.df;
  if (!df || !lengths) return { sha256, bytes: fileBytes, terms: present, postings };
  // After the pass each gap cursor is at its list's start plus its gap bytes.
  const termAt = (p: number): number => (order ? order[p]! : p);
  const impacts = impactsOfLists(
    {
      terms,
      df: (p) => df[termAt(p)]!,
      length: (p) => layout.lengths[termAt(p)]!,
      locate: (p) => cursors[STRIDE * termAt(p) + 2]! - layout.gapBytes[termAt(p)]!,
      bytes: () => out,
      describe: (p) => `${path}: the list of termID ${p}`,
    },
    lengths,
  );
  return { sha256, bytes: fileBytes, terms: present, postings, impacts };
}
