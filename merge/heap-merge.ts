/**
 * Merge (Sec. 7 of Capannini, Silvestri and Baraglia, "Sorting on GPUs for large scale datasets:
 * a thorough comparison"): a k-way merge of sorted runs through a binary min-heap over run
 * cursors, keyed by (termID, run). For each term the merge takes every run's whole segment for
 * it at once (one heap pop per (run, term)), then merges those segments by docID. Runs of one
 * dictionary hold increasing docID ranges (its blocks are filled in crawl order), so their
 * segments follow each other; runs of parse workers' own lexicons hold each worker's documents,
 * which interleave in crawl order, so their segments are merged in stretches: each stretch is
 * copied up to the next segment's docID in a tight loop over typed arrays (mergeSegments). A
 * document split across two blocks appears in two runs: its two counts are added.
 */
import { RunCursor, type CursorTerms, type PairRange, type PostingsColumns, type RunSource } from './runs.js';

/** The collection frequency of a postings list: the sum of its term frequencies. */
export function collectionFrequency(tfs: Uint32Array, df: number): number {
  let cf = 0;
  for (let i = 0; i < df; i++) cf += tfs[i]!;
  return cf;
}

/** Receives each term's postings list, in increasing termID order. Views are reused after the call. */
export type PostingsListSink = (termId: number, docIds: Uint32Array, tfs: Uint32Array, df: number) => void;

export interface MergeCounters {
  runs: number;
  pairs: number;
  terms: number;
  /** Heap pops: one per (run, term) segment. Pair-at-a-time merging would pop once per pair. */
  segmentPops: number;
}

/**
 * A min-heap of runs by the termID of their cursors, each entry's termID kept beside it (one
 * typed-array read a comparison). Runs on one term come off in any order: mergeSegments does
 * not depend on it.
 */
class RunHeap {
  private readonly run: Int32Array;
  private readonly key: Uint32Array;
  size = 0;

  constructor(private readonly cursors: RunCursor[]) {
    this.run = new Int32Array(cursors.length);
    this.key = new Uint32Array(cursors.length);
  }

  peek(): number {
    return this.run[0]!;
  }

  /** The termID of the top run. */
  topTerm(): number {
    return this.key[0]!;
  }

  /** The termID of the run after the top in heap order (the lesser of its children), or -1. */
  secondTerm(): number {
    if (this.size < 2) return -1;
    if (this.size === 2) return this.key[1]!;
    return Math.min(this.key[1]!, this.key[2]!);
  }

  push(run: number): void {
    const { run: runs, key } = this;
    const k = this.cursors[run]!.termId;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (key[parent]! <= k) break;
      runs[i] = runs[parent]!;
      key[i] = key[parent]!;
      i = parent;
    }
    runs[i] = run;
    key[i] = k;
  }

  /** Restores heap order after the top cursor moved forward (or is done: then it is removed). */
  replaceTop(): void {
    const { run: runs, key } = this;
    const top = this.cursors[runs[0]!]!;
    let run = runs[0]!;
    let k = top.termId;
    if (top.done) {
      if (--this.size === 0) return;
      run = runs[this.size]!;
      k = key[this.size]!;
    }
    const size = this.size;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) break;
      const c = l + 1 < size && key[l + 1]! < key[l]! ? l + 1 : l;
      if (key[c]! >= k) break;
      runs[i] = runs[c]!;
      key[i] = key[c]!;
      i = c;
    }
    runs[i] = run;
    key[i] = k;
  }
}

/** Growable pair of columns holding postings (one term's list, or its runs' segments) while it is being merged. */
class Postings implements PostingsColumns {
  docIds = new Uint32Array(1024);
  tfs = new Uint32Array(1024);
  df = 0;

  reserve(n: number): void {
    if (n <= this.docIds.length) return;
    const size = Math.max(n, 2 * this.docIds.length);
    const d = new Uint32Array(size);
    d.set(this.docIds.subarray(0, this.df));
    this.docIds = d;
    const t = new Uint32Array(size);
    t.set(this.tfs.subarray(0, this.df));
    this.tfs = t;
  }
}

/** Scratch memory of mergeSegments for up to `k` segments (one per run). */
export class SegmentHeap {
  /** Heap of segment numbers, and the next docID of each heap entry (kept beside it: one read a comparison). */
  readonly segment: Int32Array;
  readonly key: Uint32Array;
  /** Each segment's next posting. */
  readonly at: Int32Array;
  constructor(k: number) {
    this.segment = new Int32Array(k);
    this.key = new Uint32Array(k);
    this.at = new Int32Array(k);
  }
}

/**
 * Merges k segments by docID into `out` (emptied first): segment i is from.docIds/tfs
 * [starts[i], starts[i + 1]), each strictly increasing. A min-heap of segments by their next
 * docID; the top segment is copied up to the docID of the next one in heap order, so a pop
 * moves a stretch of postings, not one. Equal docIDs (a document split across two runs) can
 * only meet at the start of a stretch: their tfs are added there.
 */
export function mergeSegments(from: PostingsColumns, starts: Int32Array, k: number, out: PostingsColumns, scratch: SegmentHeap): void {
  out.df = 0;
  out.reserve(starts[k]! - starts[0]!);
  const docs = from.docIds;
  const tfs = from.tfs;
  const outDocs = out.docIds;
  const outTfs = out.tfs;
  const { segment: heap, key, at } = scratch;
  let n = 0;
  let size = 0;
  for (let i = 0; i < k; i++) {
    at[i] = starts[i]!;
    if (starts[i]! < starts[i + 1]!) {
      heap[size] = i;
      key[size++] = docs[starts[i]!]!;
    }
  }
  // Moves heap entry i down to its place (a closure V8 inlines; keys beside segments save a lookup).
  const siftDown = (i: number): void => {
    const seg = heap[i]!;
    const k0 = key[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) break;
      const c = l + 1 < size && key[l + 1]! < key[l]! ? l + 1 : l;
      if (key[c]! >= k0) break;
      heap[i] = heap[c]!;
      key[i] = key[c]!;
      i = c;
    }
    heap[i] = seg;
    key[i] = k0;
  };
  for (let i = (size >> 1) - 1; i >= 0; i--) siftDown(i);
  while (size > 0) {
    // Copy the top segment up to the next segment's docID.
    const s = heap[0]!;
    const limit = size === 1 ? 0xffffffff : size === 2 || key[1]! <= key[2]! ? key[1]! : key[2]!;
    let p = at[s]!;
    const end = starts[s + 1]!;
    if (n > 0 && outDocs[n - 1] === docs[p]) outTfs[n - 1]! += tfs[p++]!;
    while (p < end && docs[p]! <= limit) {
      outDocs[n] = docs[p]!;
      outTfs[n++] = tfs[p++]!;
    }
    at[s] = p;
    if (p === end) {
      size--;
      heap[0] = heap[size]!;
      key[0] = key[size]!;
    } else key[0] = docs[p]!;
    siftDown(0);
  }
  out.df = n;
}

/**
 * Merges the runs (files, or a block in memory) into postings lists handed to `sink` in termID order.
 * `chunkPairs` bounds the memory per run cursor; `ranges[i]`, if given, limits run i to those
 * pairs (one merge thread's term range, see term-ranges.ts); `terms[i]` maps run i's keys to
 * termIDs (without it, keys are termIDs).
 */
export function mergeRuns(runs: readonly RunSource[], chunkPairs: number, sink: PostingsListSink, ranges?: readonly PairRange[], terms?: readonly CursorTerms[]): MergeCounters {
  const cursors = runs.map((p, i) => new RunCursor(p, chunkPairs, ranges?.[i], terms?.[i]));
  const counters: MergeCounters = { runs: cursors.length, pairs: 0, terms: 0, segmentPops: 0 };
  const heap = new RunHeap(cursors);
  cursors.forEach((c, i) => {
    counters.pairs += c.count;
    if (!c.done) heap.push(i);
  });
  const list = new Postings();
  const segments = new Postings();
  const k = cursors.length;
  const starts = new Int32Array(k + 1);
  const scratch = new SegmentHeap(k);
  try {
    while (heap.size > 0) {
      const term = heap.topTerm();
      if (heap.secondTerm() !== term) {
        // One run holds the term: its segment is the list.
        list.df = 0;
        cursors[heap.peek()]!.takeTerm(list);
        counters.segmentPops++;
        heap.replaceTop();
        sink(term, list.docIds, list.tfs, list.df);
      } else {
        segments.df = 0;
        let count = 0;
        while (heap.size > 0 && heap.topTerm() === term) {
          starts[count++] = segments.df;
          cursors[heap.peek()]!.takeTerm(segments);
          counters.segmentPops++;
          heap.replaceTop();
        }
        starts[count] = segments.df;
        mergeSegments(segments, starts, count, list, scratch);
        sink(term, list.docIds, list.tfs, list.df);
      }
      counters.terms++;
    }
  } finally {
    for (const c of cursors) c.release();
  }
  return counters;
}
