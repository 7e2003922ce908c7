/**
 * The union of parse workers' own lexicons, by term: the index's terms in code point order
 * (termIDs are their ranks), and for each worker where each of its terms landed (finals, in the
 * order of the worker's sorted terms). A k-way merge of the sorted lists, compared as UTF-8
 * bytes (whose order is code point order). Large unions are cut into ranges of terms merged on
 * threads of their own (lexicon-union-worker.ts): a crawl of 2.5 M terms from 15 workers took
 * 1.7 s on one thread, in the parse's critical path.
 */
import { Worker } from 'node:worker_threads';
import { workerScript } from '../runtime/worker-script.js';

/** A worker's terms in code point order, as UTF-8: term i is bytes[ends[i - 1] .. ends[i]) (from 0). */
export interface ByteLexicon {
  bytes: Uint8Array;
  ends: Uint32Array;
}

export interface LexiconUnion {
  /** Every distinct term, in code point order. */
  terms: string[];
  /** finals[w][p]: the termID of worker w's p-th term in code point order. */
  finals: Uint32Array[];
}

/** One thread's share: list w's terms [starts[w], stops[w]); finals[w] is written at those places. */
export interface UnionRangeTask {
  lists: ByteLexicon[];
  finals: Uint32Array[];
  starts: number[];
  stops: number[];
}

/** What a range gives: its distinct terms (UTF-8, ranks from 0 written into finals) and how many. */
export interface UnionRangeResult {
  count: number;
  bytes: Uint8Array;
  ends: Uint32Array;
}

/** A lexicon of strings as bytes (for tests and for callers that hold strings). */
export function byteLexicon(terms: readonly string[]): ByteLexicon {
  const parts = terms.map((t) => Buffer.from(t, 'utf8'));
  const bytes = Buffer.concat(parts);
  const ends = new Uint32Array(terms.length);
  let at = 0;
  parts.forEach((p, i) => (ends[i] = at += p.length));
  return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), ends };
}

const startOf = (l: ByteLexicon, i: number): number => (i === 0 ? 0 : l.ends[i - 1]!);

function compareBytes(a: Uint8Array, as: number, ae: number, b: Uint8Array, bs: number, be: number): number {
  const n = Math.min(ae - as, be - bs);
  for (let i = 0; i < n; i++) {
    const d = a[as + i]! - b[bs + i]!;
    if (d !== 0) return d;
  }
  return ae - as - (be - bs);
}

/** Term i of list a against term j of list b. */
const compareTerms = (a: ByteLexicon, i: number, b: ByteLexicon, j: number): number => compareBytes(a.bytes, startOf(a, i), a.ends[i]!, b.bytes, startOf(b, j), b.ends[j]!);

/** The first index of `l` whose term is >= the probe's term `j` (binary search). */
function lowerBound(l: ByteLexicon, probe: ByteLexicon, j: number): number {
  let lo = 0;
  let hi = l.ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareTerms(l, mid, probe, j) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Merges the task's ranges: writes range-local ranks into finals, returns the distinct terms. */
export function uniteRange(task: UnionRangeTask): UnionRangeResult {
  const { lists, finals, starts, stops } = task;
  const at = [...starts];
  // A binary min-heap of list indexes by their current term (ties: list order).
  const heap: number[] = [];
  const less = (x: number, y: number): boolean => {
    const c = compareTerms(lists[x]!, at[x]!, lists[y]!, at[y]!);
    return c < 0 || (c === 0 && x < y);
  };
  const push = (x: number) => {
    let i = heap.length;
    heap.push(x);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  };
  const pop = (): number => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && less(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && less(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  };
  for (let x = 0; x < lists.length; x++) if (at[x]! < stops[x]!) push(x);
  let out = new Uint8Array(1 << 16);
  let outUsed = 0;
  let ends = new Uint32Array(1024);
  let count = 0;
  while (heap.length > 0) {
    const x = pop();
    const l = lists[x]!;
    const i = at[x]!;
    const s = startOf(l, i);
    const e = l.ends[i]!;
    // A new distinct term unless it equals the last one taken.
    const lastStart = count === 0 ? 0 : count === 1 ? 0 : ends[count - 2]!;
    if (count === 0 || compareBytes(out, lastStart, outUsed, l.bytes, s, e) !== 0) {
      if (outUsed + (e - s) > out.length) {
        const grownOut = new Uint8Array(Math.max(2 * out.length, outUsed + (e - s)));
        grownOut.set(out.subarray(0, outUsed));
        out = grownOut;
      }
      out.set(l.bytes.subarray(s, e), outUsed);
      outUsed += e - s;
      if (count === ends.length) {
        const grownEnds = new Uint32Array(2 * count);
        grownEnds.set(ends);
        ends = grownEnds;
      }
      ends[count++] = outUsed;
    }
    finals[x]![i] = count - 1;
    at[x] = i + 1;
    if (i + 1 < stops[x]!) push(x);
  }
  return { count, bytes: out.slice(0, outUsed), ends: ends.slice(0, count) };
}

/** Below this many terms in all a union runs on the calling thread. */
const PARALLEL_UNION_MIN_TERMS = 1 << 18;
/** Terms sampled from the lists per range wanted, to place the range boundaries. */
const SAMPLES_PER_RANGE = 32;

/** The union of `lists`, on up to `threads` threads once they hold `minTerms` terms in all. */
export async function uniteLexicons(lists: readonly ByteLexicon[], threads = 1, minTerms = PARALLEL_UNION_MIN_TERMS): Promise<LexiconUnion> {
  const total = lists.reduce((a, l) => a + l.ends.length, 0);
  const shareable = (a: Uint32Array) => (threads > 1 ? new Uint32Array(new SharedArrayBuffer(4 * a.length)) : a);
  const finals = lists.map((l) => shareable(new Uint32Array(l.ends.length)));
  // At least a quarter of minTerms a range: a thread costs more than a small range saves.
  const parts = threads > 1 && total >= minTerms ? Math.min(threads, Math.max(1, Math.ceil(total / Math.max(1, minTerms / 4)))) : 1;
  const cuts = parts > 1 ? rangeCuts(lists, parts) : [];
  // Range r is [cuts[r - 1], cuts[r]) of every list (from 0, to the end).
  const bounds = (r: number) => ({
    starts: lists.map((_, w) => (r === 0 ? 0 : cuts[r - 1]![w]!)),
    stops: lists.map((l, w) => (r === cuts.length ? l.ends.length : cuts[r]![w]!)),
  });
  const shared = parts > 1 ? lists.map(shareLexicon) : [...lists];
  const results =
    parts > 1
      ? await Promise.all(Array.from({ length: cuts.length + 1 }, (_, r) => runRange({ lists: shared, finals, ...bounds(r) })))
      : [uniteRange({ lists: shared, finals, ...bounds(0) })];
  // Each range's ranks start after the ranges before it.
  const terms: string[] = [];
  results.forEach((res, r) => {
    const base = terms.length;
    if (base > 0) {
      const { starts, stops } = bounds(r);
      finals.forEach((f, w) => {
        for (let i = starts[w]!; i < stops[w]!; i++) f[i]! += base;
      });
    }
    const buf = Buffer.from(res.bytes.buffer, res.bytes.byteOffset, res.bytes.length);
    for (let i = 0; i < res.count; i++) terms.push(buf.toString('utf8', i === 0 ? 0 : res.ends[i - 1]!, res.ends[i]!));
  });
  return { terms, finals };
}

/**
 * For `parts` ranges: the place of each boundary in every list. Boundaries are terms sampled
 * evenly from each list, sorted, taken at every total/parts; a boundary term starts its range
 * in every list (lowerBound), so each distinct term falls in exactly one range.
 */
function rangeCuts(lists: readonly ByteLexicon[], parts: number): number[][] {
  const samples: { list: number; index: number }[] = [];
  for (let w = 0; w < lists.length; w++) {
    const n = lists[w]!.ends.length;
    const k = Math.min(n, parts * SAMPLES_PER_RANGE);
    for (let s = 0; s < k; s++) samples.push({ list: w, index: Math.floor(((s + 0.5) * n) / k) });
  }
  samples.sort((a, b) => compareTerms(lists[a.list]!, a.index, lists[b.list]!, b.index));
  const cuts: number[][] = [];
  let previous: { list: number; index: number } | undefined;
  for (let r = 1; r < parts; r++) {
    const probe = samples[Math.floor((r * samples.length) / parts)];
    if (!probe || (previous && compareTerms(lists[previous.list]!, previous.index, lists[probe.list]!, probe.index) === 0)) continue;
    previous = probe;
    cuts.push(lists.map((l) => lowerBound(l, lists[probe.list]!, probe.index)));
  }
  return cuts;
}

function shareLexicon(l: ByteLexicon): ByteLexicon {
  const share = <T extends Uint8Array | Uint32Array>(a: T, make: (b: SharedArrayBuffer) => T): T => {
    if (a.buffer instanceof SharedArrayBuffer) return a;
    const out = make(new SharedArrayBuffer(a.byteLength));
    out.set(a as never);
    return out;
  };
  return { bytes: share(l.bytes, (b) => new Uint8Array(b)), ends: share(l.ends, (b) => new Uint32Array(b)) };
}

function runRange(task: UnionRangeTask): Promise<UnionRangeResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerScript('merge/lexicon-union-worker.js'), { workerData: task });
    let result: UnionRangeResult | undefined;
    worker.once('message', (m: UnionRangeResult) => (result = m));
    worker.once('error', reject);
    worker.once('exit', (code) => (result ? resolve(result) : reject(new Error(`lexicon union thread exited with code ${code} before finishing`))));
  });
}
