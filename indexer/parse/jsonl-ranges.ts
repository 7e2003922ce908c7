/**
 * Parse tasks, and line numbers across them. A large uncompressed JSONL file is cut into
 * line-aligned byte ranges, one parse task each, so that one big file keeps every parse worker
 * busy instead of one; a large .warc.gz is cut the same way at gzip members (a range's
 * reader finds its first member itself). A range's worker numbers lines from its own first line; the main thread,
 * which takes batches in crawl order, knows how many lines the earlier ranges of the file had
 * and turns range-local line numbers (in skip and warning lines, and in the `path:line` ids of
 * documents without an id field) into the file's own, so the index and the summary are the
 * same as for one task per file.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { hasNulByte, SNIFF_BYTES } from '../corpus/decode.js';
import { formatOf } from '../corpus/formats.js';
import type { ByteRange, SkippedItem } from '../corpus/index.js';
import type { ParsedBatch } from './parse-messages.js';

/** Files larger than this are cut into ranges of about this many bytes (at most; see rangeBytesFor). */
export const DEFAULT_RANGE_BYTES = 16 << 20;

/** One parse task: a whole file, the lines of a JSONL file starting in [start, end), or the gzip members of a .warc.gz starting there. */
export interface ParseTask {
  path: string;
  range?: ByteRange;
  /** Bytes of the file this task covers (for the progress ETA). */
  bytes: number;
}

/** The smallest range the plan cuts (below it, per-task costs would start to show). */
export const MIN_RANGE_BYTES = 1 << 20;

/**
 * The range size for a build with `workers` parse workers whose batches ahead of crawl order
 * are bounded by `aheadBytes` (the memory plan's bound: one block's pairs, or more). Batches are taken in crawl order, so
 * while one worker parses the task being consumed, the others fill that bound with the tasks
 * after it; once it is full they wait for credits, and the build runs at one worker's pace until
 * the task ends (measured on the H100: a one-file 2 GB crawl in 16 MiB ranges took 13.8 s to
 * parse with 15 workers, the same bytes as 250 files of 8 MB 6.3 s). So a task is at most the
 * bound's share of each worker, halved: a worker's batches take about as many bytes as the crawl
 * text they come from (pairs and document strings), about 0.7x on the synthetic crawl.
 * GPUINDEX_RANGE_BYTES overrides it: a test and benchmark knob (tests cut tiny files into many
 * ranges). Not an option: the index is the same whatever it is.
 */
export function rangeBytesFor(workers: number, aheadBytes: number): number {
  const v = Number(process.env.GPUINDEX_RANGE_BYTES);
  if (Number.isInteger(v) && v > 0) return v;
  if (workers < 2 || aheadBytes <= 0) return DEFAULT_RANGE_BYTES;
  return Math.max(MIN_RANGE_BYTES, Math.min(DEFAULT_RANGE_BYTES, Math.floor(aheadBytes / (2 * workers))));
}

/**
 * The end of a crawl cut finer: the files that end in its last `bytes` are cut into ranges of
 * `rangeBytes` (smaller than the plan's). With tasks of the plan's size the workers all finish
 * their last ones together, and that last wave of batches (about workers x range bytes of crawl)
 * reaches the sort stage only after the parse: on the H100 (15 workers, 4.3 MB ranges) the sort
 * and run writes after the last batch took 0.19-0.24 s.
 */
export interface TailCut {
  bytes: number;
  rangeBytes: number;
}

/**
 * The tail cut for `workers` parse workers and ranges of `rangeBytes`: the last two waves, in
 * ranges of `tailRangeBytes` (1 MiB). Workers with lexicons of their own take 4 MiB
 * (WORKER_LEXICONS_TAIL_RANGE_BYTES): each task's documents are a stretch of docIDs in the
 * worker's runs that the merge takes in a heap pop per term, and 1 MiB tail ranges made most
 * of the pops of a 2 GB crawl.
 */
export function tailCutFor(workers: number, rangeBytes: number, tailRangeBytes = MIN_RANGE_BYTES): TailCut | undefined {
  if (workers < 2) return undefined;
  return { bytes: 2 * workers * rangeBytes, rangeBytes: Math.min(rangeBytes, tailRangeBytes) };
}

/** The tail ranges of a build whose parse workers keep their own lexicons (tailCutFor). */
export const WORKER_LEXICONS_TAIL_RANGE_BYTES = 4 << 20;

/** The tasks of a crawl's files, in crawl order (`sizes`: each file's size on disk). */
export function planTasks(base: string, files: readonly string[], sizes: readonly number[], rangeBytes: number, tail?: TailCut): ParseTask[] {
  return planPieceTasks(base, files.map((path, i) => ({ path, size: sizes[i]!, from: 0, to: sizes[i]! })), rangeBytes, tail);
}

/**
 * The tasks of pieces of files (a shard's, indexer/parse/shards.ts), in crawl order: a whole
 * file as planTasks cuts it; a piece of one (the lines starting in [from, to)) cut the same way
 * within its bounds.
 */
export function planPieceTasks(base: string, pieces: readonly { path: string; size: number; from: number; to: number }[], rangeBytes: number, tail?: TailCut): ParseTask[] {
  const tasks: ParseTask[] = [];
  // Sizes as the parse sees them: a gzipped WARC's bytes stand for WARC_GZIP_EXPANSION times as many.
  const expansion = pieces.map((p) => (cuttableWarc(p.path) ? WARC_GZIP_EXPANSION : 1));
  const tailStart = tail ? pieces.reduce((a, p, i) => a + (p.to - p.from) * expansion[i]!, 0) - tail.bytes : Infinity;
  let pieceStart = 0;
  for (const [i, { path, size, from, to }] of pieces.entries()) {
    const bytes = to - from;
    const x = expansion[i]!;
    // Bytes of this piece before the tail region, cut at rangeBytes; the rest at the tail's size.
    const head = Math.min(bytes, Math.max(0, Math.ceil((tailStart - pieceStart) / x)));
    pieceStart += bytes * x;
    const whole = from === 0 && to === size;
    const wholeFits = head === bytes ? bytes * x <= rangeBytes : bytes * x <= tail!.rangeBytes;
    if (whole && (wholeFits || !(cuttableJsonl(base, path) || cuttableWarc(path)))) {
      tasks.push({ path, bytes: size });
      continue;
    }
    const cut = (a: number, b: number, step: number) => {
      const count = Math.ceil((b - a) / step);
      for (let k = 0; k < count; k++) {
        const start = a + Math.floor((k * (b - a)) / count);
        const end = a + Math.floor(((k + 1) * (b - a)) / count);
        tasks.push({ path, range: { start, end: end === size ? Infinity : end }, bytes: end - start });
      }
    };
    cut(from, from + head, Math.max(1, Math.floor(rangeBytes / x)));
    cut(from + head, to, Math.max(1, Math.floor((tail?.rangeBytes ?? rangeBytes) / x)));
  }
  return tasks;
}

/** Whether a file may be cut into line ranges: uncompressed JSONL that is readable text. */
export function cuttableJsonl(base: string, path: string): boolean {
  return /\.jsonl$/i.test(path) && looksLikeText(join(base, path));
}

/**
 * WARC bytes a gzipped WARC's byte stands for, when its ranges are sized: ranges then hold about
 * as much to parse as a JSONL range does, so that the workers' last ranges end together (cut at
 * their compressed size, the 16-core machine's workers ended up to 0.6 s apart). The html-docs
 * WARC inflates 5.3x, Common Crawl's WARC files about 4-5x.
 */
export const WARC_GZIP_EXPANSION = 4;

/**
 * Whether a file may be cut into ranges of gzip members: a gzipped WARC. A range's reader starts
 * at the first member at or after its start whose content opens a record, and reads the
 * members that start before its end (indexer/corpus/warc.ts); what it cannot read it reports
 * for itself, so an unreadable file is cut too (its first range says why, the others find no
 * member, and say nothing).
 */
export function cuttableWarc(path: string): boolean {
  const fmt = formatOf(path);
  return fmt?.format === 'warc' && fmt.gzip;
}

/** Readable, and not what the reader calls a binary file (which it skips whole, so it is not cut). */
function looksLikeText(full: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(full, 'r');
    const buf = Buffer.alloc(SNIFF_BYTES);
    const n = readSync(fd, buf, 0, SNIFF_BYTES, 0);
    return !hasNulByte(buf.subarray(0, n));
  } catch {
    return false; // the reader reports why, once, for the whole file
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Where numbering stands at a resume point (saved with --resume checkpoints). */
export interface LineState {
  /** Lines of the earlier ranges of the file of the task in progress. */
  lineBase: number;
  /** Items (documents and skips) of those ranges: none at all makes the file an empty file. */
  items: number;
}

/**
 * Turns the range-local line numbers of batches, taken in crawl order, into their file's. Call
 * take() for every batch in crawl order (those a resumed build skips too).
 */
export class LineNumbering {
  private base: number;
  private items: number;
  private next: LineState;

  constructor(private readonly tasks: readonly ParseTask[], resumed?: LineState) {
    this.base = resumed?.lineBase ?? 0;
    this.items = resumed?.items ?? 0;
    this.next = { lineBase: this.base, items: this.items };
  }

  /**
   * Fixes batch b's line numbers in place and, after the last range of a file with no items,
   * returns the 'empty file' skip that a single task would have reported.
   */
  take(b: ParsedBatch): SkippedItem | undefined {
    const task = this.tasks[b.seq]!;
    if (b.part === 0) {
      const continues = task.range !== undefined && task.range.start > 0;
      this.base = continues ? this.next.lineBase : 0;
      this.items = continues ? this.next.items : 0;
    }
    if (this.base > 0) {
      const ids = b.lineIds ?? [];
      for (let k = 0; k < ids.length; k += 2) b.externalIds[ids[k]!] = `${task.path}:${this.base + ids[k + 1]!}`;
      for (const s of b.skips) if (s.line !== undefined) s.line += this.base;
      for (const w of b.warnings) if (w.line !== undefined) w.line += this.base;
    }
    if (!b.last || !task.range) return undefined;
    this.next = { lineBase: this.base + (b.lines ?? 0), items: this.items + (b.items ?? 0) };
    const nextTask = this.tasks[b.seq + 1];
    const fileEnds = !(nextTask && nextTask.path === task.path && nextTask.range && nextTask.range.start > 0);
    return fileEnds && this.next.items === 0 ? { path: task.path, reason: 'empty file' } : undefined;
  }

  /** The state for a resume point at the start of task `seq` or inside it (see ResumePoint). */
  stateAt(seq: number, currentSeq: number): LineState {
    if (seq === currentSeq) return { lineBase: this.base, items: this.items };
    const task = this.tasks[seq];
    return task?.range && task.range.start > 0 ? { ...this.next } : { lineBase: 0, items: 0 };
  }
}
