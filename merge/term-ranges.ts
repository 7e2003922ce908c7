/**
 * Splits the merge by term: termIDs [0, ∞) cut into ranges of about equal pair counts, so that
 * each merge thread reads, for every run, only the pairs of its own terms (runs are in termID
 * order, so a term range is one contiguous pair range of each run), and the threads' postings
 * concatenated in range order are exactly the single-threaded merge's postings.
 */
import { closeSync, openSync } from 'node:fs';
import { firstPairAtOrAfter, readKeySamples, readRunHeader, sampleStrideOf, type CursorTerms, type PairRange } from './runs.js';
import { KeyWalk, keysBefore } from './term-order.js';
import { lexiconOfRun, type RunLexicons } from './run-lexicons.js';

/** Samples taken from each run per range wanted: enough to land within ~1/SAMPLES of even. */
const SAMPLES_PER_RANGE = 64;

/** Runs splitTermRanges tells apart in a sample's number (termIDs are below 2^32: 2^53 in all). */
const WEIGHT_SLOTS = 2 ** 21;

/**
 * Start termIDs of up to `parts` ranges (the first is 0; range i is [starts[i], starts[i+1]),
 * the last is open-ended). Boundaries are quantiles of the pairs' termIDs, estimated from
 * evenly spaced samples of each run weighted by its size; fewer ranges come back when the
 * pairs sit on fewer distinct sampled terms. `lexicons` map run keys to termIDs (KeyWalk).
 */
export function splitTermRanges(runPaths: readonly string[], parts: number, lexicons?: RunLexicons): number[] {
  // Each sample as one number, termID * 2^21 + its run's weight slot, so that one typed-array
  // sort orders them (an array of objects took as long as the reads it replaced).
  const chunks: Float64Array[] = [];
  const weights: number[] = [];
  let total = 0;
  for (let r = 0; r < runPaths.length; r++) {
    const path = runPaths[r]!;
    const fd = openSync(path, 'r');
    try {
      const { count, keySpace } = readRunHeader(fd, path);
      if (count === 0) continue;
      const lexicon = lexicons && lexiconOfRun(lexicons, r);
      const walk = lexicon && new KeyWalk(lexicon.order, keySpace, 0, 0, lexicon.finals);
      const samples = readKeySamples(fd, path, count);
      const stride = sampleStrideOf(count);
      const n = Math.min(count, parts * SAMPLES_PER_RANGE);
      const slot = weights.length;
      if (slot >= WEIGHT_SLOTS) throw new Error(`the merge cuts at most ${WEIGHT_SLOTS} runs`);
      weights.push(count / n);
      const chunk = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        // The pair evenly placed, rounded down to a sampled one.
        const key = samples[Math.floor(Math.floor(((i + 0.5) * count) / n) / stride)]!;
        chunk[i] = (walk ? walk.toFinal(key) : key) * WEIGHT_SLOTS + slot;
      }
      chunks.push(chunk);
      total += count;
    } finally {
      closeSync(fd);
    }
  }
  const all = new Float64Array(chunks.reduce((a, c) => a + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  all.sort();
  const starts = [0];
  let seen = 0;
  let previous = -1;
  for (let i = 0; i < all.length; i++) {
    const termId = Math.floor(all[i]! / WEIGHT_SLOTS);
    const cut = (starts.length * total) / parts;
    // A boundary goes before the first new term past each multiple of total/parts; the
    // range it closes holds at least the previous sample's term, so no range is empty.
    if (starts.length < parts && seen >= cut && previous >= 0 && termId > previous) starts.push(termId);
    seen += weights[all[i]! % WEIGHT_SLOTS]!;
    previous = termId;
  }
  return starts;
}

/** Each run's key at each of `starts` (ascending termIDs): where its pairs of that range begin. */
export function runKeysAt(runPaths: readonly string[], starts: readonly number[], lexicons?: RunLexicons): number[][] {
  return runPaths.map((path, r) => {
    if (!lexicons) return [...starts];
    const { order, finals } = lexiconOfRun(lexicons, r);
    const fd = openSync(path, 'r');
    try {
      return keysBefore(order, readRunHeader(fd, path).keySpace, starts, finals);
    } finally {
      closeSync(fd);
    }
  });
}

/** One thread's share of each run: its pairs, and where its keys map to termIDs. */
export interface RunShares {
  ranges: PairRange[];
  terms?: CursorTerms[];
}

/**
 * For each run, the pairs of termIDs [startTerm, endTerm) (endTerm undefined: to the end), given
 * each run's keys there (runKeysAt: keys[i] = [startKey, endKey?]).
 */
export function runSharesFor(runPaths: readonly string[], startTerm: number, keys: readonly (readonly number[])[], lexicons?: RunLexicons): RunShares {
  const ranges = runPaths.map((path, i) => {
    const fd = openSync(path, 'r');
    try {
      const { count } = readRunHeader(fd, path);
      const [startKey, endKey] = keys[i]!;
      const samples = startKey === 0 && endKey === undefined ? undefined : readKeySamples(fd, path, count);
      const start = startKey === 0 ? 0 : firstPairAtOrAfter(fd, path, count, samples!, startKey!);
      const end = endKey === undefined ? count : firstPairAtOrAfter(fd, path, count, samples!, endKey);
      return { start, end };
    } finally {
      closeSync(fd);
    }
  });
  const terms = lexicons && runPaths.map((_, i) => ({ lexicon: lexiconOfRun(lexicons, i), startTerm, startKey: keys[i]![0]! }));
  return { ranges, terms };
}

/** For each run, the pairs of termIDs [startTerm, endTerm), where keys are termIDs (no `order`). */
export function pairRangesFor(runPaths: readonly string[], startTerm: number, endTerm: number | undefined): PairRange[] {
  const bounds = endTerm === undefined ? [startTerm] : [startTerm, endTerm];
  return runSharesFor(runPaths, startTerm, runKeysAt(runPaths, bounds)).ranges;
}
