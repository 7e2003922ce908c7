/**
 * The impacts (impacts.bin, merge/impacts.ts) of a finished segment's lists, computed from its
 * postings.bin: on this thread, or by ranges of terms on threads of their own. A module of its
 * own because it reads segments (SQLite): a merge thread, which writes its range's impacts as it
 * merges, loads neither.
 */
import { SegmentReader } from './segment-reader.js';
import { inSharedMemory, runOnThread } from '../runtime/worker-script.js';
import { impactsOfLists, type Impacts } from './impact-blocks.js';
import { writeImpactsFile } from './impacts.js';

/**
 * The impacts of the lists of termIDs [from, to) of a finished segment (all by default), read in
 * file order through a window (a segment's postings are never all in memory), with one decoding
 * pass over each list. `lengths`: the documents' lengths when the caller has them (else read
 * from index.sqlite). A range's firstBlock and firstPair start from 0 (writeImpactsFile rebases them).
 */
export function computeImpacts(segment: SegmentReader, from = 0, to = segment.stats.terms, lengths = segment.documentLengths()): Impacts {
  const f = segment.figures();
  return impactsOfLists(
    {
      terms: to - from,
      df: (i) => f.df[from + i]!,
      length: (i) => f.length[from + i]!,
      locate: (i) => segment.locate(f.offset[from + i]!, f.length[from + i]!),
      bytes: () => segment.view,
      describe: (i) => `${segment.dir}: the list of termID ${from + i}`,
    },
    lengths,
  );
}

/** Writes impacts.bin into a finished segment's folder (index.sqlite and postings.bin closed). */
export function writeImpacts(dir: string): void {
  const segment = new SegmentReader(dir);
  let impacts: Impacts;
  try {
    impacts = computeImpacts(segment);
  } finally {
    segment.close();
  }
  writeImpactsFile(dir, impacts);
}

/**
 * writeImpacts over `threads` worker threads, each computing the impacts of a range of terms
 * holding about an equal share of postings.bin (the competitive pairs cost ~35 ns a posting:
 * 5-6 s for a 2 GB crawl on one thread of the H200 machine). `lengths`: the documents' lengths,
 * when the caller has them.
 */
export async function writeImpactsParallel(dir: string, threads: number, lengths?: Uint32Array, minBytes = PARALLEL_IMPACTS_BYTES): Promise<void> {
  const segment = new SegmentReader(dir);
  let ranges: [number, number][];
  try {
    const terms = segment.stats.terms;
    const bytes = segment.postingsBytes;
    if (threads <= 1 || bytes < minBytes) {
      writeImpactsFile(dir, computeImpacts(segment, 0, terms, lengths ?? segment.documentLengths()));
      return;
    }
    // Cut where the lists' offsets pass each 1/threads of the file.
    const f = segment.figures();
    ranges = [];
    let from = 0;
    for (let t = 0; t < terms && ranges.length < threads - 1; t++) {
      if (f.offset[t]! >= ((ranges.length + 1) * bytes) / threads && t > from) {
        ranges.push([from, t]);
        from = t;
      }
    }
    ranges.push([from, terms]);
  } finally {
    segment.close();
  }
  const shared = lengths && inSharedMemory(lengths);
  const parts = await Promise.all(ranges.map(([from, to]) => impactsOnThread({ dir, from, to, lengths: shared })));
  writeImpactsFile(dir, parts);
}

/** Below this much postings, one thread computes the impacts (a thread costs ~10 ms to start). */
const PARALLEL_IMPACTS_BYTES = 16 << 20;

export interface ImpactsTask {
  dir: string;
  from: number;
  to: number;
  lengths?: Uint32Array;
}

function impactsOnThread(task: ImpactsTask): Promise<Impacts> {
  return runOnThread<Impacts>('merge/impacts-worker.js', task, 'impacts thread');
}
