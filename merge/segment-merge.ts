/**
 * Merges segments into one by term: the segment merge behind `gpuindex optimize`. Its output is
 * what one build of all the segments' documents in segment order writes: docIDs follow segment
 * order (each segment's shifted by the documents before it), and termIDs are given by first
 * occurrence over that stream, which is, segment by segment, each segment's own terms in its
 * termID order that no earlier segment had. A term's postings are its lists from every segment
 * that has it, in segment order, re-encoded as one list.
 */
import { join } from 'node:path';
import { decodePostings } from './postings-codec.js';
import { PostingsFileWriter } from './postings-file.js';
import { INDEX_DB, INDEX_FORMAT_VERSION, IndexStoreWriter, POSTINGS_FILE, type CollectionStats } from './index-store.js';
import { writeManifest } from './manifest.js';
import { SegmentReader, type SegmentFigures } from './segment-reader.js';

export interface SegmentMergeResult {
  stats: CollectionStats;
  postingsBytes: number;
}

/** One input segment while it is merged. */
interface Input {
  reader: SegmentReader;
  figures: SegmentFigures;
  docBase: number;
  /** The segment's termIDs ordered by their merged termID, and those merged termIDs. */
  order: Uint32Array;
  merged: Uint32Array;
  /** Next entry of `order`. */
  at: number;
}

/**
 * Merges the segments in `dirs` (in docID order) into a new one-segment index in `out` (an empty
 * folder): postings.bin, index.sqlite with `settings`, MANIFEST.json.
 */
export function mergeSegments(dirs: readonly string[], out: string, settings: Record<string, unknown>, onFraction?: (f: number) => void): SegmentMergeResult {
  const readers: SegmentReader[] = [];
  try {
    for (const d of dirs) readers.push(new SegmentReader(d));
    return mergeOpened(readers, out, settings, onFraction);
  } finally {
    for (const r of readers) r.close();
  }
}

function mergeOpened(readers: SegmentReader[], out: string, settings: Record<string, unknown>, onFraction?: (f: number) => void): SegmentMergeResult {
  // Merged termIDs by first occurrence: segment by segment, in each segment's termID order.
  const ids = new Map<string, number>();
  const terms: string[] = [];
  const inputs: Input[] = [];
  let docBase = 0;
  for (const reader of readers) {
    const localToMerged = new Uint32Array(reader.stats.terms);
    let local = 0;
    for (const term of reader.termsInIdOrder()) {
      let id = ids.get(term);
      if (id === undefined) {
        id = terms.length;
        ids.set(term, id);
        terms.push(term);
      }
      localToMerged[local++] = id;
    }
    if (local !== reader.stats.terms) throw new Error(`${reader.dir}: ${local} terms listed, its statistics say ${reader.stats.terms}`);
    const order = new Uint32Array(local);
    for (let i = 0; i < local; i++) order[i] = i;
    order.sort((a, b) => localToMerged[a]! - localToMerged[b]!);
    const merged = new Uint32Array(local);
    for (let i = 0; i < local; i++) merged[i] = localToMerged[order[i]!]!;
    inputs.push({ reader, figures: reader.figures(), docBase, order, merged, at: 0 });
    docBase += reader.stats.documents;
  }
  ids.clear();

  const store = new IndexStoreWriter(join(out, INDEX_DB));
  const postings = new PostingsFileWriter(join(out, POSTINGS_FILE));
  try {
    let totalTokens = 0;
    for (const input of inputs) {
      for (const [docId, externalId, path, length] of input.reader.documentRows()) store.addDocument(input.docBase + docId, externalId, path, length);
      totalTokens += input.reader.stats.totalTokens;
    }
    store.flushDocuments();
    let postingsCount = 0;
    const parts: Input[] = [];
    for (let t = 0; t < terms.length; t++) {
      parts.length = 0;
      for (const input of inputs) if (input.at < input.merged.length && input.merged[input.at] === t) parts.push(input);
      const { docIds, tfs, df, cf } = concatLists(parts);
      const { offset, length } = postings.append(docIds, tfs, df);
      store.addTermRow(t, terms[t]!);
      store.addTermStats(t, df, cf, offset, length);
      postingsCount += df;
      if (onFraction && (t & 0xffff) === 0) onFraction(t / terms.length);
    }
    store.flushTerms();
    const sha256 = postings.close()!;
    const stats: CollectionStats = {
      documents: docBase,
      terms: terms.length,
      totalTokens,
      averageLength: docBase ? totalTokens / docBase : 0,
      postings: postingsCount,
      formatVersion: INDEX_FORMAT_VERSION,
    };
    store.setStats(stats);
    store.setSettings(settings);
    store.commitAndClose();
    writeManifest(out, [INDEX_DB, POSTINGS_FILE], INDEX_FORMAT_VERSION, { [POSTINGS_FILE]: sha256 });
    return { stats, postingsBytes: postings.offset };
  } catch (err) {
    postings.closeQuietly();
    store.abort();
    throw err;
  }
}

/** One term's lists from `parts` (in segment order), as one list in merged docIDs; advances each part. */
function concatLists(parts: Input[]): { docIds: Uint32Array; tfs: Uint32Array; df: number; cf: number } {
  let df = 0;
  let cf = 0;
  for (const p of parts) {
    const local = p.order[p.at]!;
    df += p.figures.df[local]!;
    cf += p.figures.cf[local]!;
  }
  const docIds = new Uint32Array(df);
  const tfs = new Uint32Array(df);
  let n = 0;
  for (const p of parts) {
    const local = p.order[p.at++]!;
    const list = decodePostings(p.reader.readListBytes(p.figures.offset[local]!, p.figures.length[local]!), p.figures.df[local]!);
    for (let i = 0; i < list.docIds.length; i++) docIds[n + i] = p.docBase + list.docIds[i]!;
    tfs.set(list.tfs, n);
    n += list.docIds.length;
  }
  return { docIds, tfs, df, cf };
}
