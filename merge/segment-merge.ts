/**
 * Merges segments into one by term: the segment merge behind `gpuindex optimize` and the
 * writer's merges. Its output is what one build of all the segments' live documents in segment
 * order writes: docIDs follow segment order (each segment's shifted by the live documents before
 * it), and termIDs are the ranks of the terms in code point order (merge/term-order.ts), so the
 * segments' lexicons, each in that order, merge in one pass with no dictionary. A term's
 * postings are its lists from every segment that has it, in segment order, as one list; a term
 * left with no live document is dropped. Segments with positions (--positions) merge into a
 * segment with positions (segment-positions.ts); segments with and without do not merge.
 */
import { join } from 'node:path';
import { writeVarintU32 } from './varint.js';
import { decodePostings } from './postings-codec.js';
import { readDeletes } from './deletes.js';
import { PostingsFileWriter } from './postings-file.js';
import { INDEX_DB, INDEX_FORMAT_VERSION, IndexStoreWriter, POSTINGS_FILE, type CollectionStats } from './index-store.js';
import { writeManifest } from './manifest.js';
import { writeImpacts } from './segment-impacts.js';
import { SegmentReader, type SegmentFigures } from './segment-reader.js';
import { TermHeap } from './term-heap.js';
import { POSITIONS_FILE, type PositionsFile } from './positions-file.js';
import { MergedTermParts, openInputPositions, writeMergedPositions } from './segment-positions.js';

export interface SegmentMergeResult {
  stats: CollectionStats;
  postingsBytes: number;
  /** positions.bin's bytes, where the segments have positions. */
  positionsBytes?: number;
}

/** One input segment while it is merged. */
interface Input {
  /** Position among the inputs: segment order, which breaks ties between equal terms. */
  index: number;
  reader: SegmentReader;
  figures: SegmentFigures;
  docBase: number;
  /** The segment's terms in code point order, and their termIDs (undefined: the position). */
  terms: string[];
  ids?: Uint32Array;
  /** Next entry of `terms`. */
  at: number;
  /** The termID of the list being merged. */
  local: number;
  /** Where the tfs of the list being merged start in the reader's view. */
  tfsStart: number;
  /** With deleted documents: each docID's merged docID less docBase, -1 for a deleted one. */
  renumber?: Int32Array;
  /** With deleted documents: each termID's postings in live documents. */
  liveDf?: Uint32Array;
}

/** A segment to merge: its folder and, where it has deleted documents, its deletes file (merge/deletes.ts). */
export interface MergeInput {
  dir: string;
  deletes?: string;
}

/** Bytes of the inputs' postings a merge holds in memory by default (each segment's whole, while they fit). */
export const MERGE_MEMORY_BYTES = 2 ** 31;

/**
 * Merges the segments in `dirs` (in docID order) into a new one-segment index in `out` (an empty
 * folder): postings.bin, index.sqlite with the first segment's settings (less its `shard`, which
 * no merged segment is) and `settings` over them, positions.bin where the segments have
 * positions, MANIFEST.json. Segments whose postings
 * fit in `memoryBytes` (in order) are read whole: a term's lists are taken in the merged order,
 * which is not a segment's file order, and a read each cost more than the merge itself (64
 * segments of a 300 MB crawl, 1.4 M lists: 9.2 s with a read per list).
 */
export function mergeSegments(segments: readonly MergeInput[], out: string, settings: Record<string, unknown>, onFraction?: (f: number) => void, memoryBytes = MERGE_MEMORY_BYTES): SegmentMergeResult {
  const readers: SegmentReader[] = [];
  let positions: PositionsFile[] | undefined;
  try {
    for (const s of segments) readers.push(new SegmentReader(s.dir));
    let budget = memoryBytes;
    for (const r of readers) {
      const bytes = r.postingsBytes;
      if (bytes > budget) break;
      r.loadPostings();
      budget -= bytes;
    }
    positions = openInputPositions(readers, budget).files;
    const { shard: _shard, ...first } = readers[0]!.settings;
    return mergeOpened(readers, segments.map((s, i) => (s.deletes ? readDeletes(s.dir, s.deletes, readers[i]!.stats.documents) : undefined)), out, { ...first, ...settings }, onFraction, positions);
  } finally {
    for (const r of readers) r.close();
    for (const f of positions ?? []) f.close();
  }
}

function mergeOpened(readers: SegmentReader[], gone: (Uint8Array | undefined)[], out: string, settings: Record<string, unknown>, onFraction?: (f: number) => void, positions?: PositionsFile[]): SegmentMergeResult {
  const inputs: Input[] = [];
  let docBase = 0;
  let termRows = 0;
  for (const [r, reader] of readers.entries()) {
    const figures = reader.figures();
    // Deleted documents are dropped: the live ones renumbered in order, and terms left with no
    // live posting dropped.
    const renumber = gone[r] && renumbering(gone[r]!);
    const liveDf = renumber && liveFrequencies(reader, figures, renumber);
    const { terms, ids } = reader.termsInTermOrder();
    if (terms.length !== reader.stats.terms) throw new Error(`${reader.dir}: ${terms.length} terms listed, its statistics say ${reader.stats.terms}`);
    inputs.push({ index: r, reader, figures, docBase, terms, ids, at: 0, local: 0, tfsStart: 0, renumber, liveDf });
    docBase += renumber ? live(renumber) : reader.stats.documents;
    termRows += terms.length;
  }

  const store = new IndexStoreWriter(join(out, INDEX_DB));
  const postings = new PostingsFileWriter(join(out, POSTINGS_FILE));
  try {
    let totalTokens = 0;
    for (const input of inputs) {
      const renumber = input.renumber;
      if (!renumber) {
        store.appendDocumentsOf(join(input.reader.dir, INDEX_DB), input.docBase);
        totalTokens += input.reader.stats.totalTokens;
        continue;
      }
      for (const [docId, externalId, path, length, warcDate, warcRecordId] of input.reader.documentRows()) {
        if (renumber[docId]! < 0) continue;
        store.addDocument(input.docBase + renumber[docId]!, externalId, path, length, [warcDate, warcRecordId]);
        totalTokens += length;
      }
      store.flushDocuments();
    }
    let postingsCount = 0;
    let t = 0;
    let taken = 0;
    const heap = new TermHeap(inputs);
    // With positions: each merged term's parts, for positions.bin after the postings.
    const termParts = positions && new MergedTermParts();
    const parts: Input[] = [];
    const popped: Input[] = [];
    while (heap.size > 0) {
      // Every segment at the smallest term, in segment order (the heap's tie order).
      const term = heap.top.terms[heap.top.at]!;
      popped.length = 0;
      while (heap.size > 0 && heap.top.terms[heap.top.at] === term) popped.push(heap.pop());
      parts.length = 0;
      for (const p of popped) {
        p.local = p.ids ? p.ids[p.at]! : p.at;
        if (!p.liveDf || p.liveDf[p.local]! > 0) parts.push(p);
      }
      if (parts.length > 0) {
        const { df, cf, offset, length } = parts.some((p) => p.renumber) ? appendRenumbered(postings, parts) : appendMerged(postings, parts);
        store.addTerm(t, term, df, cf, offset, length);
        if (termParts) {
          for (const p of parts) termParts.add(p.index, p.local);
          termParts.endTerm();
        }
        postingsCount += df;
        t++;
      }
      for (const p of popped) {
        p.at++;
        if (p.at < p.terms.length) heap.push(p);
      }
      taken += popped.length;
      if (onFraction && (taken & 0xffff) < popped.length) onFraction(taken / termRows);
    }
    const sha256 = postings.close()!;
    const stats: CollectionStats = {
      documents: docBase,
      terms: t,
      totalTokens,
      averageLength: docBase ? totalTokens / docBase : 0,
      postings: postingsCount,
      formatVersion: store.formatVersion,
    };
    store.setStats(stats);
    store.setSettings(settings);
    store.commitAndClose();
    let positionsBytes: number | undefined;
    if (termParts) {
      const written = writeMergedPositions(join(out, POSITIONS_FILE), inputs.map((p) => ({ reader: p.reader, figures: p.figures, file: positions![p.index]!, docBase: p.docBase, renumber: p.renumber })), termParts, docBase);
      if (written.postings !== postingsCount) throw new Error(`segment merge: positions.bin holds ${written.postings} postings, postings.bin ${postingsCount}`);
      positionsBytes = written.bytes;
    }
    writeImpacts(out);
    writeManifest(out, [INDEX_DB, POSTINGS_FILE, ...(termParts ? [POSITIONS_FILE] : [])], INDEX_FORMAT_VERSION, { [POSTINGS_FILE]: sha256 });
    return { stats, postingsBytes: postings.offset, ...(positionsBytes !== undefined ? { positionsBytes } : {}) };
  } catch (err) {
    postings.closeQuietly();
    store.abort();
    throw err;
  }
}

/**
 * Appends one term's lists from `parts` (in segment order) as one list in merged docIDs, and
 * advances each part. The encoded bytes are spliced, not decoded and encoded again: a list is
 * its docID gaps then its tfs, so the merged list is every part's gaps, each part's first gap
 * rewritten against the previous part's last docID, then every part's tfs.
 */
function appendMerged(postings: PostingsFileWriter, parts: Input[]): { df: number; cf: number; offset: number; length: number } {
  let df = 0;
  let cf = 0;
  let bytes = 0;
  for (const p of parts) {
    const local = p.local;
    df += p.figures.df[local]!;
    cf += p.figures.cf[local]!;
    bytes += p.figures.length[local]! + 5;
  }
  const at = postings.appendWith(bytes, (out, pos) => {
    let lastDoc = -1;
    for (const p of parts) {
      const local = p.local;
      const start = p.reader.locate(p.figures.offset[local]!, p.figures.length[local]!);
      const src = p.reader.view;
      const n = p.figures.df[local]!;
      // The first gap (the part's first docID) rewritten, the rest of its gaps copied as they are.
      let i = start;
      let b = src[i++]!;
      let v = b & 0x7f;
      for (let sh = 7; b >= 0x80; sh += 7) {
        b = src[i++]!;
        v |= (b & 0x7f) << sh;
      }
      const firstDoc = p.docBase + (v >>> 0);
      pos = writeVarintU32(out, pos, lastDoc < 0 ? firstDoc : firstDoc - lastDoc);
      const restStart = i;
      let doc = firstDoc;
      for (let k = 1; k < n; k++) {
        b = src[i++]!;
        v = b & 0x7f;
        for (let sh = 7; b >= 0x80; sh += 7) {
          b = src[i++]!;
          v |= (b & 0x7f) << sh;
        }
        doc += v >>> 0;
      }
      pos = copy(src, restStart, i, out, pos);
      lastDoc = doc;
      p.tfsStart = i;
    }
    for (const p of parts) {
      const local = p.local;
      const end = p.reader.locate(p.figures.offset[local]!, p.figures.length[local]!) + p.figures.length[local]!;
      pos = copy(p.reader.view, p.tfsStart, end, out, pos);
    }
    return pos;
  });
  return { df, cf, ...at };
}

/** Copies src[from, to) to out[pos..]; returns the position after it. Short runs byte by byte: a view costs more. */
function copy(src: Uint8Array, from: number, to: number, out: Uint8Array, pos: number): number {
  if (to - from > 64) {
    out.set(src.subarray(from, to), pos);
    return pos + to - from;
  }
  for (let i = from; i < to; i++) out[pos++] = src[i]!;
  return pos;
}

/** Each docID's number among the live documents, -1 for a deleted one. */
function renumbering(deleted: Uint8Array): Int32Array {
  const out = new Int32Array(deleted.length);
  let next = 0;
  for (let d = 0; d < deleted.length; d++) out[d] = deleted[d] ? -1 : next++;
  return out;
}

const live = (renumber: Int32Array): number => renumber.reduce((a, v) => (v >= 0 ? a + 1 : a), 0);

/** Each term's postings in live documents (one decode of every list of the segment). */
function liveFrequencies(reader: SegmentReader, figures: SegmentFigures, renumber: Int32Array): Uint32Array {
  const out = new Uint32Array(figures.df.length);
  for (let t = 0; t < figures.df.length; t++) {
    const { docIds } = decodePostings(reader.readListBytes(figures.offset[t]!, figures.length[t]!), figures.df[t]!);
    let n = 0;
    for (const d of docIds) if (renumber[d]! >= 0) n++;
    out[t] = n;
  }
  return out;
}

/** appendMerged for a term some of whose parts have deleted documents: decoded, filtered, encoded. */
function appendRenumbered(postings: PostingsFileWriter, parts: Input[]): { df: number; cf: number; offset: number; length: number } {
  const docs: number[] = [];
  const tfs: number[] = [];
  for (const p of parts) {
    const local = p.local;
    const list = decodePostings(p.reader.readListBytes(p.figures.offset[local]!, p.figures.length[local]!), p.figures.df[local]!);
    for (let i = 0; i < list.docIds.length; i++) {
      const d = p.renumber ? p.renumber[list.docIds[i]!]! : list.docIds[i]!;
      if (d < 0) continue;
      docs.push(p.docBase + d);
      tfs.push(list.tfs[i]!);
    }
  }
  const cf = tfs.reduce((a, b) => a + b, 0);
  return { df: docs.length, cf, ...postings.append(Uint32Array.from(docs), Uint32Array.from(tfs), docs.length) };
}
