/**
 * Splits the merge by term: termIDs [0, ∞) cut into ranges of about equal pair counts, so that
 * each merge thread reads, for every run, only the pairs of its own terms (runs are sorted by
 * termID, so a term range is one contiguous pair range of each run), and the threads' postings
 * concatenated in range order are exactly the single-threaded merge's postings.
 */
import { closeSync, openSync } from 'node:fs';
import { firstPairAtOrAfter, readRunHeader, termIdAt, type PairRange } from './runs.js';

/** Samples taken from each run per range wanted: enough to land within ~1/SAMPLES of even. */
const SAMPLES_PER_RANGE = 64;

/**
 * Start termIDs of up to `parts` ranges (the first is 0; range i is [starts[i], starts[i+1]),
 * the last is open-ended). Boundaries are quantiles of the pairs' termIDs, estimated from
 * evenly spaced samples of each run weighted by its size; fewer ranges come back when the
 * pairs sit on fewer distinct sampled terms.
 */
export function splitTermRanges(runPaths: readonly string[], parts: number): number[] {
  const samples: { termId: number; weight: number }[] = [];
  let total = 0;
  for (const path of runPaths) {
    const fd = openSync(path, 'r');
    try {
      const count = readRunHeader(fd, path);
      if (count === 0) continue;
      const n = Math.min(count, parts * SAMPLES_PER_RANGE);
      for (let i = 0; i < n; i++) samples.push({ termId: termIdAt(fd, Math.floor(((i + 0.5) * count) / n)), weight: count / n });
      total += count;
    } finally {
      closeSync(fd);
    }
  }
  samples.sort((a, b) => a.termId - b.termId);
  const starts = [0];
  let seen = 0;
  let previous = -1;
  for (const s of samples) {
    const cut = (starts.length * total) / parts;
    // A boundary goes before the first new term past each multiple of total/parts; the
    // range it closes holds at least the previous sample's term, so no range is empty.
    if (starts.length < parts && seen >= cut && previous >= 0 && s.termId > previous) starts.push(s.termId);
    seen += s.weight;
    previous = s.termId;
  }
  return starts;
}

/** For each run, the pairs of termIDs [startTerm, endTerm) (endTerm undefined: to the end). */
export function pairRangesFor(runPaths: readonly string[], startTerm: number, endTerm: number | undefined): PairRange[] {
  return runPaths.map((path) => {
    const fd = openSync(path, 'r');
    try {
      const count = readRunHeader(fd, path);
      const start = startTerm === 0 ? 0 : firstPairAtOrAfter(fd, count, startTerm);
      const end = endTerm === undefined ? count : firstPairAtOrAfter(fd, count, endTerm);
      return { start, end };
    } finally {
      closeSync(fd);
    }
  });
}
