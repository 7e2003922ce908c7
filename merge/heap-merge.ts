/**
 * Merge (Sec. 7 of Capannini, Silvestri and Baraglia, "Sorting on GPUs for large scale datasets:
 * a thorough comparison"): a k-way merge of sorted runs through a binary min-heap over run
 * cursors, keyed by (termID, docID, run). When a run is at the top of the heap the merge takes
 * its segment for the current term at once, instead of one pair at a time, up to the docID the
 * next run holds for the same term: runs of one dictionary hold increasing docID ranges (its
 * blocks are filled in crawl order), so that is the whole segment; runs of parse workers' own
 * lexicons hold each worker's documents, which interleave in crawl order, so their segments
 * are taken in stretches. A document split across two blocks appears in two runs: its two
 * counts are added.
 */
import { RunCursor, type CursorTerms, type PairRange } from './runs.js';

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

export class RunHeap {
  private readonly heap: number[] = [];
  constructor(private readonly cursors: RunCursor[]) {}

  private less(a: number, b: number): boolean {
    const x = this.cursors[a]!;
    const y = this.cursors[b]!;
    if (x.termId !== y.termId) return x.termId < y.termId;
    if (x.docId !== y.docId) return x.docId < y.docId;
    return a < b;
  }

  get size(): number {
    return this.heap.length;
  }

  peek(): number {
    return this.heap[0]!;
  }

  /** The run after the top in heap order (the lesser of its children), or -1. */
  second(): number {
    const h = this.heap;
    if (h.length < 2) return -1;
    if (h.length === 2 || this.less(h[1]!, h[2]!)) return h[1]!;
    return h[2]!;
  }

  push(run: number): void {
    const h = this.heap;
    let i = h.length;
    h.push(run);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  /** Restores heap order after the top cursor moved forward (or is done: then it is removed). */
  replaceTop(): void {
    const h = this.heap;
    if (this.cursors[h[0]!]!.done) {
      const last = h.pop()!;
      if (h.length === 0) return;
      h[0] = last;
    }
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

/** Growable pair of columns holding one term's postings while it is being merged. */
class PostingsAccumulator {
  docIds = new Uint32Array(1024);
  tfs = new Uint32Array(1024);
  df = 0;

  add(docId: number, tf: number): void {
    const last = this.df - 1;
    if (last >= 0 && this.docIds[last] === docId) {
      this.tfs[last]! += tf; // the document straddles two runs
      return;
    }
    if (last >= 0 && docId < this.docIds[last]!) throw new Error(`merge: docIDs out of order (${docId} after ${this.docIds[last]})`);
    if (this.df === this.docIds.length) {
      const d = new Uint32Array(this.df * 2);
      d.set(this.docIds);
      this.docIds = d;
      const t = new Uint32Array(this.df * 2);
      t.set(this.tfs);
      this.tfs = t;
    }
    this.docIds[this.df] = docId;
    this.tfs[this.df++] = tf;
  }
}

/**
 * Merges the run files into postings lists handed to `sink` in termID order.
 * `chunkPairs` bounds the memory per run cursor; `ranges[i]`, if given, limits run i to those
 * pairs (one merge thread's term range, see term-ranges.ts); `terms[i]` maps run i's keys to
 * termIDs (without it, keys are termIDs).
 */
export function mergeRuns(runPaths: readonly string[], chunkPairs: number, sink: PostingsListSink, ranges?: readonly PairRange[], terms?: readonly CursorTerms[]): MergeCounters {
  const cursors = runPaths.map((p, i) => new RunCursor(p, chunkPairs, ranges?.[i], terms?.[i]));
  const counters: MergeCounters = { runs: cursors.length, pairs: 0, terms: 0, segmentPops: 0 };
  const heap = new RunHeap(cursors);
  cursors.forEach((c, i) => {
    counters.pairs += c.count;
    if (!c.done) heap.push(i);
  });
  const acc = new PostingsAccumulator();
  const add = (docId: number, tf: number) => acc.add(docId, tf);
  let term = -1;
  try {
    while (heap.size > 0) {
      const cursor = cursors[heap.peek()]!;
      if (cursor.termId !== term) {
        if (term >= 0) {
          sink(term, acc.docIds, acc.tfs, acc.df);
          counters.terms++;
        }
        term = cursor.termId;
        acc.df = 0;
      }
      const next = heap.second();
      const rival = next >= 0 ? cursors[next]! : undefined;
      cursor.takeSegment(add, rival !== undefined && rival.termId === term ? rival.docId : 0xffffffff);
      counters.segmentPops++;
      heap.replaceTop();
    }
    if (term >= 0) {
      sink(term, acc.docIds, acc.tfs, acc.df);
      counters.terms++;
    }
  } finally {
    for (const c of cursors) c.close();
  }
  return counters;
}
