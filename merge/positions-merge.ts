/**
 * --positions: a term range's positions from the runs and their positions files, by a heap merge
 * of its own beside the postings' (heap-merge.ts): the same order of (termID, docID, run), each
 * pair's position read in step with it, title copies' NO_POSITION dropped. Each merge thread runs
 * it over its range into a part (range-merge.ts), after its postings; the single-threaded merge
 * over every run into positions.bin (writePositionsFile). Its own heap, so that the postings
 * merge's hot loop stays as it is.
 */
import { BinaryHeap } from './binary-heap.js';
import { RunCursor, type CursorTerms, type PairRange } from './runs.js';
import { NO_POSITION, positionsPathOf, RunPositionsReader } from './run-positions.js';
import { lexiconOfRun, type RunLexicons } from './run-lexicons.js';
import { PositionsFileWriter, type PositionsSink } from './positions-file.js';


export interface PositionsMergeInput {
  path: string;
  runPaths: readonly string[];
  /** Pairs per run cursor (and positions per reader). */
  chunkPairs: number;
  /** How the runs' keys map to termIDs (write-index.ts runLexiconsOf). */
  lexicons: RunLexicons;
  terms: number;
  /** Each document's title length in terms, by docID. */
  titleLengths: Uint32Array;
  /** The build's titleWeight (a reader tells a posting's positions' end by it). */
  titleWeight: number;
  /** Each document's position bound (positions-file.ts positionBounds). */
  ends: Uint32Array;
}

export interface PositionsMergeResult {
  bytes: number;
  /** Positions written (title copies left out). */
  positions: number;
  postings: number;
}

class PositionsAccumulator {
  docIds = new Uint32Array(1024);
  /** Each posting's tf: its pairs, the title's repeats' among them. */
  tfs = new Uint32Array(1024);
  /** Where each posting's positions start in `positions`; ends[i] = starts[i + 1]. */
  starts = new Uint32Array(1025);
  positions = new Uint32Array(4096);
  df = 0;
  used = 0;

  reset(): void {
    this.df = 0;
    this.used = 0;
    this.starts[0] = 0;
  }

  /** Adds the next `tf` positions of `reader` to document `docId`'s posting. */
  take(docId: number, tf: number, reader: RunPositionsReader): void {
    const last = this.df - 1;
    const straddles = last >= 0 && this.docIds[last] === docId;
    if (straddles) this.tfs[last]! += tf;
    else {
      // Each column grown on its own: they are of different lengths (grown together, docIds fell
      // one slot short past 2,050 postings and a document straddling runs there was split).
      if (this.df === this.docIds.length) {
        this.docIds = grownCopy(this.docIds, 2 * this.df);
        this.tfs = grownCopy(this.tfs, 2 * this.df);
      }
      if (this.df + 1 >= this.starts.length) this.starts = grownCopy(this.starts, 2 * this.df + 4);
      this.tfs[this.df] = tf;
      this.docIds[this.df++] = docId;
    }
    if (this.used + tf > this.positions.length) this.positions = grownCopy(this.positions, Math.max(2 * this.positions.length, this.used + tf));
    const from = this.used;
    this.used = reader.copyInto(this.positions, this.used, tf, NO_POSITION);
    // A document split across runs: its runs come in block order, so its positions go on rising;
    // sorted anyway should a later run hold earlier ones.
    if (straddles && from > this.starts[last]! && this.used > from && this.positions[from]! < this.positions[from - 1]!) this.positions.subarray(this.starts[last]!, this.used).sort();
    this.starts[this.df] = this.used;
  }
}

function grownCopy(a: Uint32Array, n: number): Uint32Array<ArrayBuffer> {
  const b = new Uint32Array(n);
  b.set(a);
  return b;
}

export function writePositionsFile(input: PositionsMergeInput): PositionsMergeResult {
  const writer = new PositionsFileWriter(input.path, input.terms, input);
  try {
    const terms = input.runPaths.map((_, i) => ({ lexicon: lexiconOfRun(input.lexicons, i) }));
    const counts = mergePositions(input.runPaths, input.chunkPairs, writer, undefined, terms);
    writer.close();
    return { ...counts, bytes: writer.offset };
  } catch (err) {
    writer.closeQuietly();
    throw err;
  }
}

/**
 * Merges the positions of the runs (run i limited to ranges[i], its keys mapped by terms[i], as
 * mergeRuns takes them) into `sink`, term by term in termID order. Returns the positions and
 * postings written.
 */
export function mergePositions(runPaths: readonly string[], chunkPairs: number, sink: PositionsSink, ranges?: readonly PairRange[], terms?: readonly CursorTerms[]): Omit<PositionsMergeResult, 'bytes'> {
  const cursors: RunCursor[] = [];
  const readers: RunPositionsReader[] = [];
  try {
    runPaths.forEach((path, i) => {
      const cursor = new RunCursor(path, chunkPairs, ranges?.[i], terms?.[i]);
      cursors.push(cursor);
      readers.push(new RunPositionsReader(positionsPathOf(path), cursor.count, chunkPairs, ranges?.[i]?.start ?? 0));
    });
    // Runs in (termID, docID) order of their cursors: positions are merged a segment at a time in pair order.
    const heap = new BinaryHeap<number>((a, b) => {
      const x = cursors[a]!;
      const y = cursors[b]!;
      if (x.termId !== y.termId) return x.termId < y.termId;
      if (x.docId !== y.docId) return x.docId < y.docId;
      return a < b;
    });
    cursors.forEach((c, i) => {
      if (!c.done) heap.push(i);
    });
    const acc = new PositionsAccumulator();
    const result = { positions: 0, postings: 0 };
    const flushTerm = (termId: number) => {
      sink.beginTerm(termId);
      for (let i = 0; i < acc.df; i++) sink.addPosting(acc.docIds[i]!, acc.tfs[i]!, acc.positions, acc.starts[i]!, acc.starts[i + 1]! - acc.starts[i]!);
      result.postings += acc.df;
      result.positions += acc.used;
    };
    let term = -1;
    let reader!: RunPositionsReader;
    const take = (docId: number, tf: number) => acc.take(docId, tf, reader);
    while (heap.size > 0) {
      const top = heap.top;
      const cursor = cursors[top]!;
      if (cursor.termId !== term) {
        if (term >= 0) flushTerm(term);
        term = cursor.termId;
        acc.reset();
      }
      const next = heap.second();
      const rival = next !== undefined ? cursors[next]! : undefined;
      reader = readers[top]!;
      cursor.takeSegment(take, rival !== undefined && rival.termId === term ? rival.docId : 0xffffffff);
      if (cursor.done) heap.pop();
      else heap.siftTop();
    }
    if (term >= 0) flushTerm(term);
    return result;
  } finally {
    for (const c of cursors) c.release();
    for (const r of readers) r.close();
  }
}
