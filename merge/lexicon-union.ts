/**
 * The union of parse workers' own lexicons, by term: the index's terms in code point order
 * (termIDs are their ranks), and for each worker where each of its terms landed (finals, in the
 * order of the worker's sorted terms). A k-way merge of the sorted lists through the term heap
 * segment merges use. Large unions are cut into ranges of terms merged on threads of their own
 * (lexicon-union-worker.ts): a crawl of 2.5 M terms from 15 workers took 1.7 s on one thread,
 * in the parse's critical path.
 */
import { inSharedMemory, runOnThread } from '../runtime/worker-script.js';
import { compareTerms } from './term-order.js';
import { TermHeap, type TermCursor } from './term-heap.js';

/**
 * A worker's terms in code point order, as UTF-8 in one buffer, each followed by a NUL (no term
 * holds one: the tokenizer splits on every non-word character), and where each term ends (its
 * NUL's offset). A thread decodes a whole range of a list with one call and splits it, rather
 * than making a string a term (~1 us each, a call across to C++ apiece).
 */
export interface ByteLexicon {
  bytes: Uint8Array;
  ends: Uint32Array;
}

export interface LexiconUnion {
  /** Distinct terms in all. */
  count: number;
  /**
   * Every distinct term in code point order, as texts of terms joined by NULs (pieces of up to
   * PIECE_TERMS terms, in order; termsOfTexts): splitting them into strings costs ~100 ns a
   * term, so it is left to whoever needs the strings (the lexicon rows, written while the merge
   * threads run).
   */
  texts: string[];
  /** Terms in each of `texts`. */
  textTerms: number[];
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

/** What a range gives: its distinct terms joined by NULs, in pieces in order (ranks from 0 written into finals), and how many. */
export interface UnionRangeResult {
  count: number;
  texts: string[];
  textTerms: number[];
}

const SEPARATOR = '\0';

/** Terms (in code point order) as a ByteLexicon, in shared memory when `shared`. */
export function byteLexicon(terms: readonly string[], shared = false): ByteLexicon {
  const joined = terms.length > 0 ? terms.join(SEPARATOR) + SEPARATOR : '';
  const size = Buffer.byteLength(joined, 'utf8');
  const bytes = shared ? Buffer.from(new SharedArrayBuffer(Math.max(1, size)), 0, size) : Buffer.allocUnsafe(size);
  bytes.write(joined, 0, 'utf8');
  const ends = new Uint32Array(shared ? new SharedArrayBuffer(Math.max(4, 4 * terms.length)) : new ArrayBuffer(4 * terms.length), 0, terms.length);
  let at = 0;
  const ascii = size === joined.length;
  for (let i = 0; i < terms.length; i++) {
    at += ascii ? terms[i]!.length : Buffer.byteLength(terms[i]!, 'utf8');
    ends[i] = at;
    at++;
  }
  return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, size), ends };
}

const startOf = (l: ByteLexicon, i: number): number => (i === 0 ? 0 : l.ends[i - 1]! + 1);
const bufferOf = (l: ByteLexicon): Buffer => Buffer.from(l.bytes.buffer, l.bytes.byteOffset, l.bytes.length);

/** Terms [from, to) of `l` as strings, decoded in one call. */
function termsOf(l: ByteLexicon, from: number, to: number): string[] {
  if (from >= to) return [];
  return bufferOf(l).toString('utf8', startOf(l, from), l.ends[to - 1]!).split(SEPARATOR);
}

/** The first index of `l` whose term is >= `term` (binary search). */
function lowerBound(l: ByteLexicon, term: string): number {
  let lo = 0;
  let hi = l.ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareTerms(termsOf(l, mid, mid + 1)[0]!, term) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Terms a range's cursor decodes from its list at a time. */
const CURSOR_TERMS = 1024;
/** Distinct terms joined into one piece of a range's result. */
const PIECE_TERMS = 1 << 16;

/**
 * A list's terms [from, stop) read CURSOR_TERMS at a time: a range's strings live a chunk a
 * list, not the whole range (100 M terms from 414 generations held ~6 GiB of strings across the
 * union's threads at once).
 */
class ChunkCursor implements TermCursor {
  terms: string[] = [];
  at = 0;
  /** The list's index of terms[0]. */
  base = 0;

  constructor(
    private readonly list: ByteLexicon,
    from: number,
    private readonly stop: number,
    readonly index: number,
  ) {
    this.load(from);
  }

  private load(from: number): void {
    this.base = from;
    this.terms = termsOf(this.list, from, Math.min(from + CURSOR_TERMS, this.stop));
    this.at = 0;
  }

  /** Steps to the next term; false past the range's end. */
  advance(): boolean {
    if (++this.at < this.terms.length) return true;
    const next = this.base + this.terms.length;
    if (next >= this.stop) return false;
    this.load(next);
    return true;
  }
}

/** Whether the list's bytes [from, to) may hold a code unit at or above U+D800 (a UTF-8 lead byte of 0xED or more). */
function mayHoldHighUnits(l: ByteLexicon, from: number, to: number): boolean {
  if (from >= to) return false;
  const bytes = l.bytes;
  for (let i = startOf(l, from), end = l.ends[to - 1]!; i < end; i++) if (bytes[i]! >= 0xed) return true;
  return false;
}

/** Merges the task's ranges: writes range-local ranks into finals, returns the distinct terms. */
export function uniteRange(task: UnionRangeTask): UnionRangeResult {
  const { lists, finals, starts, stops } = task;
  // TermHeap leaves out a cursor whose range is empty.
  const cursors = lists.map((l, index) => new ChunkCursor(l, starts[index]!, stops[index]!, index));
  const plain = !lists.some((l, index) => mayHoldHighUnits(l, starts[index]!, stops[index]!));
  const heap = new TermHeap(cursors, plain);
  const texts: string[] = [];
  const textTerms: number[] = [];
  let piece: string[] = [];
  let count = 0;
  const popped: ChunkCursor[] = [];
  while (heap.size > 0) {
    const term = heap.top.terms[heap.top.at]!;
    const rank = count++;
    piece.push(term);
    if (piece.length === PIECE_TERMS) {
      texts.push(piece.join(SEPARATOR));
      textTerms.push(piece.length);
      piece = [];
    }
    popped.length = 0;
    while (heap.size > 0 && heap.top.terms[heap.top.at] === term) popped.push(heap.pop());
    for (const c of popped) {
      finals[c.index]![c.base + c.at] = rank;
      if (c.advance()) heap.push(c);
    }
  }
  if (piece.length > 0) {
    texts.push(piece.join(SEPARATOR));
    textTerms.push(piece.length);
  }
  return { count, texts, textTerms };
}

/**
 * The terms [from, to) of LexiconUnion.texts (`textTerms` terms in each) as texts of the same
 * form, for textChunks: views of the pieces that hold them, cut at separators.
 */
export function textsOfRange(texts: readonly string[], textTerms: readonly number[], from: number, to: number): string[] {
  const out: string[] = [];
  /** Where the k-th separator of `text` is. */
  const separator = (text: string, k: number): number => {
    let at = -1;
    for (let i = 0; i <= k; i++) at = text.indexOf(SEPARATOR, at + 1);
    return at;
  };
  for (let i = 0, first = 0; i < texts.length && first < to; first += textTerms[i]!, i++) {
    const n = textTerms[i]!;
    if (first + n <= from) continue;
    const a = Math.max(from, first) - first;
    const b = Math.min(to, first + n) - first;
    if (a >= b) continue;
    const text = texts[i]!;
    out.push(text.slice(a === 0 ? 0 : separator(text, a - 1) + 1, b === n ? text.length : separator(text, b - 1)));
  }
  return out;
}

/** Strings handed out one at a time from chunks of them (textChunks): a term's figures take the next. */
export class TermStream {
  private readonly chunks: Iterator<readonly string[]>;
  private chunk: readonly string[] = [];
  private at = 0;

  constructor(chunks: Iterable<readonly string[]>) {
    this.chunks = chunks[Symbol.iterator]();
  }

  /** The next string, or undefined past the last. */
  next(): string | undefined {
    while (this.at === this.chunk.length) {
      const r = this.chunks.next();
      if (r.done) return undefined;
      this.chunk = r.value;
      this.at = 0;
    }
    return this.chunk[this.at++];
  }
}

/** The terms of LexiconUnion.texts, in order. */
export function* termsOfTexts(texts: readonly string[]): Generator<string> {
  for (const text of texts) yield* text.split(SEPARATOR);
}

/** Characters of a chunk of textChunks, about: a range's text may hold millions of terms, whose strings need not all live at once. */
const CHUNK_CHARS = 1 << 20;

/** termsOfTexts, about `chunkChars` characters of terms at a time (each text cut at a separator). */
export function* textChunks(texts: readonly string[], chunkChars = CHUNK_CHARS): Generator<string[]> {
  for (const text of texts) {
    if (text.length === 0) yield [''];
    for (let from = 0; from < text.length; ) {
      let end = text.indexOf(SEPARATOR, from + chunkChars);
      if (end < 0) end = text.length;
      yield text.slice(from, end).split(SEPARATOR);
      from = end + 1;
    }
  }
}

/** Below this many terms in all a union runs on the calling thread. */
const PARALLEL_UNION_MIN_TERMS = 1 << 18;
/** Terms sampled from the lists per range wanted, to place the range boundaries. */
const SAMPLES_PER_RANGE = 32;

/** The union of `lists`, on up to `threads` threads once they hold `minTerms` terms in all. */
export async function uniteLexicons(lists: readonly ByteLexicon[], threads = 1, minTerms = PARALLEL_UNION_MIN_TERMS): Promise<LexiconUnion> {
  const total = lists.reduce((a, l) => a + l.ends.length, 0);
  // At least a quarter of minTerms a range: a thread costs more than a small range saves.
  const parts = threads > 1 && total >= minTerms ? Math.min(threads, Math.max(1, Math.ceil(total / Math.max(1, minTerms / 4)))) : 1;
  // The range threads write their ranks straight into the finals.
  const finals = lists.map((l) => new Uint32Array(parts > 1 ? new SharedArrayBuffer(4 * l.ends.length) : new ArrayBuffer(4 * l.ends.length)));
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
  let count = 0;
  const texts: string[] = [];
  const textTerms: number[] = [];
  results.forEach((res, r) => {
    const base = count;
    if (base > 0) {
      const { starts, stops } = bounds(r);
      finals.forEach((f, w) => {
        for (let i = starts[w]!; i < stops[w]!; i++) f[i]! += base;
      });
    }
    for (const t of res.texts) texts.push(t);
    for (const n of res.textTerms) textTerms.push(n);
    count += res.count;
  });
  return { count, texts, textTerms, finals };
}

/**
 * For `parts` ranges: the place of each boundary in every list. Boundaries are terms sampled
 * evenly from each list, sorted, taken at every total/parts; a boundary term starts its range
 * in every list (lowerBound), so each distinct term falls in exactly one range.
 */
function rangeCuts(lists: readonly ByteLexicon[], parts: number): number[][] {
  const samples: string[] = [];
  for (const l of lists) {
    const n = l.ends.length;
    const k = Math.min(n, parts * SAMPLES_PER_RANGE);
    for (let s = 0; s < k; s++) {
      const i = Math.floor(((s + 0.5) * n) / k);
      samples.push(termsOf(l, i, i + 1)[0]!);
    }
  }
  samples.sort(compareTerms);
  const cuts: number[][] = [];
  let previous: string | undefined;
  for (let r = 1; r < parts; r++) {
    const probe = samples[Math.floor((r * samples.length) / parts)];
    if (probe === undefined || probe === previous) continue;
    previous = probe;
    cuts.push(lists.map((l) => lowerBound(l, probe)));
  }
  return cuts;
}

function shareLexicon(l: ByteLexicon): ByteLexicon {
  return { bytes: inSharedMemory(l.bytes), ends: inSharedMemory(l.ends) };
}

function runRange(task: UnionRangeTask): Promise<UnionRangeResult> {
  return runOnThread<UnionRangeResult>('merge/lexicon-union-worker.js', task, 'lexicon union thread');
}
