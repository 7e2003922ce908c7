/**
 * The union of parse workers' own lexicons, by term: the index's terms in code point order
 * (termIDs are their ranks), and for each worker where each of its terms landed (finals, in the
 * order of the worker's sorted terms). A k-way merge of the sorted lists, comparing their UTF-8
 * bytes (uniteRange). Large unions are cut into ranges of terms merged on threads of their own
 * (lexicon-union-worker.ts): the union sits in the build's critical path, between the parse
 * workers' last runs and the merge.
 */
import { inSharedMemory, runOnThread } from '../runtime/worker-script.js';
import { compareTerms } from './term-order.js';

/**
 * A worker's terms in code point order, as UTF-8 in one buffer, each followed by a NUL (no term
 * holds one: the tokenizer splits on every non-word character), and where each term ends (its
 * NUL's offset). The union compares the terms where they lie (uniteRange): a string a term cost
 * ~1 us each, a call across to C++ apiece.
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
  /** Distinct terms after which the scan gives way to the heap where the lists share few (uniteRange); a test knob: 0 takes the heap from the start. */
  scanProbeTerms?: number;
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

/** Distinct terms joined into one piece of a range's result. */
const PIECE_TERMS = 1 << 16;

/** See uniteRange's scan: the share of the lists a distinct term must be in, on average, for the scan to go on. */
const SCAN_MIN_SHARE = 0.25;
const SCAN_PROBE_TERMS = 1024;

/**
 * Merges the task's ranges: writes range-local ranks into finals, returns the distinct terms.
 * Terms are compared as UTF-8 bytes in the lists' own buffers (byte order is code point order):
 * no string is made for a term until its piece of the result is decoded in one call, which made
 * the union several times faster than a heap of decoded strings.
 */
export function uniteRange(task: UnionRangeTask): UnionRangeResult {
  const { lists, finals, starts, stops } = task;
  const scanProbeTerms = task.scanProbeTerms ?? SCAN_PROBE_TERMS;
  const k = lists.length;
  const bytes = lists.map((l) => l.bytes);
  const ends = lists.map((l) => l.ends);
  /** Each list's current term: its index, its bytes [from, to), and its first 8 bytes as two big-endian keys (0-padded). */
  const at = new Int32Array(k);
  const from = new Int32Array(k);
  const to = new Int32Array(k);
  const key0 = new Uint32Array(k);
  const key1 = new Uint32Array(k);
  /** A min-heap of list numbers by current term, then list number. */
  const heap = new Int32Array(k);
  let size = 0;
  const less = (a: number, b: number): boolean => {
    if (key0[a] !== key0[b]) return key0[a]! < key0[b]!;
    if (key1[a] !== key1[b]) return key1[a]! < key1[b]!;
    // The first 8 bytes agree (a term shorter than 8 bytes has ended in them, on a 0 pad that no term byte equals).
    const x = bytes[a]!;
    const y = bytes[b]!;
    const xa = from[a]!;
    const ya = from[b]!;
    const xn = to[a]! - xa;
    const yn = to[b]! - ya;
    const n = xn < yn ? xn : yn;
    for (let i = 8; i < n; i++) {
      const c = x[xa + i]! - y[ya + i]!;
      if (c !== 0) return c < 0;
    }
    return xn !== yn ? xn < yn : a < b;
  };
  const siftDown = (i: number): void => {
    const w = heap[i]!;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && less(heap[c + 1]!, heap[c]!)) c++;
      if (!less(heap[c]!, w)) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = w;
  };
  const place = (w: number, i: number): void => {
    const b = bytes[w]!;
    const start = i === 0 ? 0 : ends[w]![i - 1]! + 1;
    const end = ends[w]![i]!;
    at[w] = i;
    from[w] = start;
    to[w] = end;
    let k0 = 0;
    let k1 = 0;
    for (let j = 0; j < 4; j++) k0 = k0 * 256 + (start + j < end ? b[start + j]! : 0);
    for (let j = 4; j < 8; j++) k1 = k1 * 256 + (start + j < end ? b[start + j]! : 0);
    key0[w] = k0;
    key1[w] = k1;
  };
  for (let w = 0; w < k; w++) {
    if (starts[w]! >= stops[w]!) continue;
    place(w, starts[w]!);
    heap[size++] = w;
  }

  const texts: string[] = [];
  const textTerms: number[] = [];
  /** The piece being gathered: its terms' bytes, each followed by a NUL. */
  let piece = Buffer.allocUnsafe(1 << 16);
  let pieceBytes = 0;
  let pieceTerms = 0;
  const closePiece = (): void => {
    texts.push(piece.toString('utf8', 0, pieceBytes - 1));
    textTerms.push(pieceTerms);
    pieceBytes = 0;
    pieceTerms = 0;
  };
  let count = 0;
  /** The term being ranked: list t's current term when it was taken (t moves on before the others are compared). */
  let termBytes: Uint8Array = new Uint8Array(0);
  let termFrom = 0;
  let termLength = 0;
  let termKey0 = 0;
  let termKey1 = 0;
  /** Takes list t's current term as the next distinct one: appends its bytes to the result's piece, returns its rank. */
  const takeTerm = (t: number): number => {
    const tb = (termBytes = bytes[t]!);
    const ta = (termFrom = from[t]!);
    const tn = (termLength = to[t]! - ta);
    termKey0 = key0[t]!;
    termKey1 = key1[t]!;
    if (pieceBytes + tn + 1 > piece.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * piece.length, pieceBytes + tn + 1));
      piece.copy(grown, 0, 0, pieceBytes);
      piece = grown;
    }
    for (let i = 0; i < tn; i++) piece[pieceBytes + i] = tb[ta + i]!;
    piece[pieceBytes + tn] = 0;
    pieceBytes += tn + 1;
    if (++pieceTerms === PIECE_TERMS) closePiece();
    return count++;
  };
  /** Whether list w's current term is the one being ranked. */
  const atTerm = (w: number): boolean => {
    const wa = from[w]!;
    if (to[w]! - wa !== termLength || key0[w] !== termKey0 || key1[w] !== termKey1) return false;
    const wb = bytes[w]!;
    for (let i = 8; i < termLength; i++) if (wb[wa + i] !== termBytes[termFrom + i]) return false;
    return true;
  };

  // The scan: the lists with terms left are `heap[0, size)` in no order; each distinct term is
  // the least of their current terms (k comparisons), and every list at it moves on. Parse
  // workers' lexicons share most terms (the HTML crawl's 15 workers: 427 k terms, 30 k
  // distinct), and then this costs ~2k comparisons a distinct term where the heap sifts once a
  // list at it, ~k log k. Where the lists share fewer terms than a SCAN_MIN_SHARE of them on
  // average over the first SCAN_PROBE_TERMS distinct terms, the heap takes over.
  let advanced = 0;
  while (size > 0) {
    if (count === scanProbeTerms && advanced <= SCAN_MIN_SHARE * size * count) break;
    let t = heap[0]!;
    for (let j = 1; j < size; j++) if (less(heap[j]!, t)) t = heap[j]!;
    const rank = takeTerm(t);
    for (let j = 0; j < size; ) {
      const w = heap[j]!;
      if (w !== t && !atTerm(w)) {
        j++;
        continue;
      }
      advanced++;
      finals[w]![at[w]!] = rank;
      const next = at[w]! + 1;
      if (next < stops[w]!) {
        place(w, next);
        j++;
      } else heap[j] = heap[--size]!;
    }
  }
  for (let i = (size >> 1) - 1; i >= 0; i--) siftDown(i);
  while (size > 0) {
    const rank = takeTerm(heap[0]!);
    // Every list at this term takes its rank and moves on; the term's bytes stay in its list's buffer.
    for (let first = true; ; first = false) {
      const w = heap[0]!;
      if (!first && !atTerm(w)) break;
      finals[w]![at[w]!] = rank;
      const next = at[w]! + 1;
      if (next < stops[w]!) place(w, next);
      else heap[0] = heap[--size]!;
      if (size === 0) break;
      siftDown(0);
    }
  }
  if (pieceTerms > 0) closePiece();
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

/**
 * Below this many terms in all a union runs on the calling thread: it unites about 9 M terms a
 * second there (bench/lexicon-union.mjs), and a thread takes 50-80 ms to start.
 */
const PARALLEL_UNION_MIN_TERMS = 1 << 20;
/** Terms sampled from the lists per range wanted, to place the range boundaries. */
const SAMPLES_PER_RANGE = 32;

/** The union of `lists`, on up to `threads` threads once they hold `minTerms` terms in all (`scanProbeTerms`: uniteRange's, a test knob). */
export async function uniteLexicons(lists: readonly ByteLexicon[], threads = 1, minTerms = PARALLEL_UNION_MIN_TERMS, scanProbeTerms?: number): Promise<LexiconUnion> {
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
  const knob = scanProbeTerms !== undefined ? { scanProbeTerms } : {};
  const results =
    parts > 1
      ? await Promise.all(Array.from({ length: cuts.length + 1 }, (_, r) => runRange({ lists: shared, finals, ...bounds(r), ...knob })))
      : [uniteRange({ lists: shared, finals, ...bounds(0), ...knob })];
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
