/**
 * Which segments a writer merges, and when: a tiered policy over adjacent segments (merging
 * only neighbours keeps docIDs in arrival order, so a merge changes no document's rank). A
 * segment's tier is the power of `factor` its size reaches above `floorDocuments`; `factor`
 * neighbours of one tier (smaller ones between them taken along) merge into one of the next, so
 * each document is merged about log_factor(N / floor) times (write amplification) and the index
 * holds about factor − 1 segments a tier. No merge has one input larger than twice the others
 * together. A segment with more than `maxDeletedShare` of its documents
 * deleted is merged with its smaller neighbour first, which drops them. Cf. Lucene's
 * TieredMergePolicy (10 a tier, a floor, a maximum merged size) and LogMergePolicy (neighbours).
 */

export interface MergePolicy {
  /** Segments of a tier merged at once. Default 10. */
  factor: number;
  /** Segments up to this many documents form the lowest tier. Default 1000. */
  floorDocuments: number;
  /** No merge makes a segment of more live documents than this. Default 10 M. */
  maxMergedDocuments: number;
  /** A segment with a larger share of deleted documents is merged first. Default 0.2. */
  maxDeletedShare: number;
}

export const DEFAULT_MERGE_POLICY: MergePolicy = { factor: 10, floorDocuments: 1000, maxMergedDocuments: 10_000_000, maxDeletedShare: 0.2 };

export interface SegmentSize {
  documents: number;
  deleted: number;
}

const tierOf = (live: number, p: MergePolicy): number => Math.max(0, Math.floor(Math.log(Math.max(live, 1) / p.floorDocuments) / Math.log(p.factor)) + 1);

/** The range [start, end) of segments to merge next, or undefined when none needs merging. */
export function pickMerge(segments: readonly SegmentSize[], p: MergePolicy = DEFAULT_MERGE_POLICY): [number, number] | undefined {
  const live = segments.map((s) => s.documents - s.deleted);
  // Deleted documents first: the segment with the largest share, with its smaller neighbour.
  let worst = -1;
  for (let i = 0; i < segments.length; i++) {
    const share = segments[i]!.documents ? segments[i]!.deleted / segments[i]!.documents : 0;
    if (share > p.maxDeletedShare && (worst < 0 || share > segments[worst]!.deleted / segments[worst]!.documents)) worst = i;
  }
  if (worst >= 0) {
    if (segments.length === 1) return [0, 1];
    const left = worst > 0 ? live[worst - 1]! : Infinity;
    const right = worst + 1 < segments.length ? live[worst + 1]! : Infinity;
    const range: [number, number] = left <= right ? [worst - 1, worst + 1] : [worst, worst + 2];
    if (live[range[0]]! + live[range[1] - 1]! <= p.maxMergedDocuments) return range;
    return [worst, worst + 1];
  }
  // Bands, left to right (cf. Lucene's LogMergePolicy): from `start`, the highest tier among the
  // segments left and the last segment of that tier; `factor` neighbours inside the band merge,
  // smaller segments between larger ones included (flushes are of uneven sizes: requiring
  // `factor` of one tier side by side would leave many unmerged). The lowest band's leftmost
  // window that no guard refuses is taken.
  const tiers = live.map((n) => tierOf(n, p));
  let best: [number, number] | undefined;
  let bestTier = Infinity;
  for (let start = 0; start < segments.length; ) {
    let top = -1;
    for (let i = start; i < segments.length; i++) top = Math.max(top, tiers[i]!);
    let upto = start;
    for (let i = start; i < segments.length; i++) if (tiers[i] === top) upto = i;
    if (top < bestTier) {
      for (let i = start; i + p.factor <= upto + 1; i++) {
        const window = live.slice(i, i + p.factor);
        const total = window.reduce((a, b) => a + b, 0);
        const largest = Math.max(...window);
        // No merge past the largest size, and none of very uneven inputs: rewriting a large segment
        // to take in a few small ones is the write amplification tiers are there to avoid.
        if (total > p.maxMergedDocuments || largest > 2 * (total - largest)) continue;
        best = [i, i + p.factor];
        bestTier = top;
        break;
      }
    }
    start = upto + 1;
  }
  return best;
}

/**
 * The next merge among segments some of which are busy (a running merge holds them): the policy
 * over each run of free neighbours, the candidate of fewest live documents first (the cheapest
 * merge lowers the count soonest).
 */
export function pickMergeAround(segments: readonly (SegmentSize & { busy: boolean })[], p: MergePolicy = DEFAULT_MERGE_POLICY): [number, number] | undefined {
  let best: [number, number] | undefined;
  let bestLive = Infinity;
  for (let start = 0; start < segments.length; ) {
    if (segments[start]!.busy) {
      start++;
      continue;
    }
    let end = start;
    while (end < segments.length && !segments[end]!.busy) end++;
    const range = pickMerge(segments.slice(start, end), p);
    if (range) {
      const live = segments.slice(start + range[0], start + range[1]).reduce((a, s) => a + s.documents - s.deleted, 0);
      if (live < bestLive) {
        best = [start + range[0], start + range[1]];
        bestLive = live;
      }
    }
    start = end;
  }
  return best;
}
