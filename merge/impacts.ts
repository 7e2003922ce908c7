/**
 * impacts.bin: a segment's skip and score-bound data, a side file beside postings.bin, so a
 * query can skip postings blocks (document-at-a-time pruning, src/query/) without a change to
 * the postings format. Each term's list is cut into blocks of IMPACT_BLOCK postings; for each
 * block the file holds its last docID, where its first docID gap and first tf start (byte
 * offsets from the list's start into the gaps and tfs columns, merge/postings-codec.ts), and
 * its competitive (tf, document length) pairs: those no other posting of the block beats with a
 * tf as high and a document as short (Lucene's "competitive impacts"). BM25 grows with tf and
 * falls with length, so the best of these pairs is the block's exact maximum contribution for
 * any k1 >= 0, 0 <= b <= 1 and any collection statistics: the statistics (N, df, the average
 * length) change as segments come and go, the file stays valid for the segment's life (deletes
 * only lower the true maximum). A block keeps at most MAX_PAIRS pairs; where it has more,
 * neighbours are merged into (the larger tf, the shorter length), which bounds them both.
 * (Its largest tf with its shortest length alone bounds the block too, but on a 1 GB crawl that
 * bound was near the list's maximum in every block of the frequent terms: nothing was skipped.)
 *
 * Layout (little-endian u32 throughout):
 *   header (32 bytes): magic "GPIXIMP1", block size, terms T, blocks B, pairs P, 2 reserved (0);
 *   firstBlock[T + 1]: each termID's first block (firstBlock[T] = B);
 *   lastDoc[B], gapsAt[B], tfsAt[B], firstPair[B + 1] (firstPair[B] = P);
 *   pairTf[P], pairLength[P]: each block's pairs, by length ascending (and so tf ascending).
 */
import { closeSync, existsSync, fstatSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { SegmentFormatError, SegmentReader } from './segment-reader.js';
import { inSharedMemory, runOnThread } from '../runtime/worker-script.js';
import { IMPACT_BLOCK, impactsOfLists, type Impacts } from './impact-blocks.js';
import { readFullAt } from '../runtime/read-at.js';

export const IMPACTS_FILE = 'impacts.bin';
export const IMPACTS_MAGIC = Buffer.from('GPIXIMP1', 'latin1');
const HEADER_BYTES = 32;

/** Typed arrays are written as they lie in memory: little-endian is what the file holds. */
function checkEndianness(): void {
  if (endianness() !== 'LE') throw new Error('impacts.bin is little-endian; this machine is big-endian');
}

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

/** Values of a column copied (or rebased) a chunk at a time, so that no part is copied whole. */
const COLUMN_CHUNK = 1 << 16;

/** impacts.bin's columns in file order; firstBlock and firstPair hold offsets into later ones, rebased when ranges are joined. */
const COLUMNS = ['firstBlock', 'lastDoc', 'gapsAt', 'tfsAt', 'firstPair', 'pairTf', 'pairLength'] as const;
type Column = (typeof COLUMNS)[number];

/** One term range's impacts to write: in memory, or a file of impacts.bin's format (a merge thread's part). */
interface ImpactsSource {
  blockSize: number;
  terms: number;
  blocks: number;
  pairs: number;
  /** Values [from, from + count) of a column: a view, or read into `scratch`. */
  values(column: Column, from: number, count: number, scratch: Uint32Array): Uint32Array;
  close(): void;
}

const columnLength = (c: Column, p: { terms: number; blocks: number; pairs: number }): number =>
  c === 'firstBlock' ? p.terms + 1 : c === 'firstPair' ? p.blocks + 1 : c === 'pairTf' || c === 'pairLength' ? p.pairs : p.blocks;

function memorySource(impacts: Impacts): ImpactsSource {
  return {
    blockSize: impacts.blockSize,
    terms: impacts.firstBlock.length - 1,
    blocks: impacts.lastDoc.length,
    pairs: impacts.pairTf.length,
    values: (column, from, count) => impacts[column].subarray(from, from + count),
    close: () => {},
  };
}

function fileSource(path: string): ImpactsSource {
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(HEADER_BYTES);
    if (readSync(fd, header, 0, HEADER_BYTES, 0) !== HEADER_BYTES || !header.subarray(0, 8).equals(IMPACTS_MAGIC)) throw new Error(`impacts part ${path}: bad header`);
    const [blockSize, terms, blocks, pairs] = [header.readUInt32LE(8), header.readUInt32LE(12), header.readUInt32LE(16), header.readUInt32LE(20)];
    const starts = new Map<Column, number>();
    let at = HEADER_BYTES;
    for (const c of COLUMNS) {
      starts.set(c, at);
      at += 4 * columnLength(c, { terms, blocks, pairs });
    }
    if (fstatSync(fd).size !== at) throw new Error(`impacts part ${path}: ${fstatSync(fd).size} bytes, its header says ${at}`);
    return {
      blockSize,
      terms,
      blocks,
      pairs,
      values: (column, from, count, scratch) => {
        const bytes = new Uint8Array(scratch.buffer, scratch.byteOffset, 4 * count);
        if (readFullAt(fd, bytes, starts.get(column)! + 4 * from) < bytes.length) throw new Error(`impacts part ${path}: cut short`);
        return scratch.subarray(0, count);
      },
      close: () => closeSync(fd),
    };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * Writes impacts.bin from impacts in hand (an ImpactsBuilder's) or the impacts of consecutive
 * term ranges in order: in memory, or files of impacts.bin's format (a merge thread's part,
 * removed once written). The ranges are written column by column as one, each range's firstBlock
 * and firstPair rebased on the blocks and pairs of the ranges before it; they are never joined in
 * memory (at 100 M terms they hold ~2.8 GB).
 */
export function writeImpactsFile(dir: string, impacts: Impacts | readonly (Impacts | string)[]): void {
  writeImpactsAt(join(dir, IMPACTS_FILE), Array.isArray(impacts) ? (impacts as readonly (Impacts | string)[]) : [impacts as Impacts]);
  if (Array.isArray(impacts)) for (const p of impacts) if (typeof p === 'string') rmSync(p, { force: true });
}

/** writeImpactsFile to `path` (a merge thread writes its range's part so). */
export function writeImpactsAt(path: string, parts: readonly (Impacts | string)[]): void {
  checkEndianness();
  const sources: ImpactsSource[] = [];
  const fd = openSync(path, 'wx');
  try {
    for (const p of parts) sources.push(typeof p === 'string' ? fileSource(p) : memorySource(p));
    const total = { terms: 0, blocks: 0, pairs: 0 };
    for (const src of sources) {
      total.terms += src.terms;
      total.blocks += src.blocks;
      total.pairs += src.pairs;
    }
    const header = new Uint32Array(HEADER_BYTES / 4);
    new Uint8Array(header.buffer).set(IMPACTS_MAGIC, 0);
    header[2] = sources[0]?.blockSize ?? IMPACT_BLOCK;
    header[3] = total.terms;
    header[4] = total.blocks;
    header[5] = total.pairs;
    const write = (a: Uint32Array) => {
      const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    };
    write(header);
    const scratch = new Uint32Array(COLUMN_CHUNK);
    for (const column of COLUMNS) {
      // An offset column: each range's values but its last (the count it holds), shifted by the ranges before, then the total.
      const offsets = column === 'firstBlock' || column === 'firstPair';
      let base = 0;
      for (const src of sources) {
        const n = columnLength(column, src) - (offsets ? 1 : 0);
        for (let from = 0; from < n; from += COLUMN_CHUNK) {
          const k = Math.min(COLUMN_CHUNK, n - from);
          let v = src.values(column, from, k, scratch);
          if (offsets && base !== 0) {
            // A view of a part in memory is copied, shifted, into the scratch; a part read from a file is there already.
            const out = scratch.subarray(0, k);
            for (let i = 0; i < k; i++) out[i] = v[i]! + base;
            v = out;
          }
          write(v);
        }
        if (offsets) base += column === 'firstBlock' ? src.blocks : src.pairs;
      }
      if (offsets) write(Uint32Array.of(column === 'firstBlock' ? total.blocks : total.pairs));
    }
  } finally {
    for (const src of sources) src.close();
    closeSync(fd);
  }
}

/** Bytes read a call: readFileSync refuses files past 2 GiB (a 100 M-term index's impacts.bin is 2.8 GB). */
export const READ_CHUNK_BYTES = 1 << 30;

/**
 * A whole file read into a Uint32Array's memory (aligned for its views), in chunks of `chunk`
 * bytes; `bytes` views the same memory, as long as the file.
 */
export function readWords(path: string, chunk = READ_CHUNK_BYTES): { bytes: Buffer; words: Uint32Array } {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const words = new Uint32Array(Math.ceil(size / 4));
    const bytes = Buffer.from(words.buffer, 0, size);
    let off = 0;
    while (off < size) {
      const n = readSync(fd, bytes, off, Math.min(chunk, size - off), off);
      if (n === 0) throw new Error(`${path}: the file ended at ${off} of ${size} bytes`);
      off += n;
    }
    return { bytes, words: words.subarray(0, size >>> 2) };
  } finally {
    closeSync(fd);
  }
}

/**
 * A segment's impacts.bin, or undefined where the segment has none (written before the file
 * existed). A file that does not fit the segment is a SegmentFormatError naming why.
 */
export function readImpacts(dir: string, terms: number): Impacts | undefined {
  const path = join(dir, IMPACTS_FILE);
  if (!existsSync(path)) return undefined;
  checkEndianness();
  const { bytes: buf, words } = readWords(path);
  const bad = (why: string) => new SegmentFormatError(`${path}: ${why}; remove the file to search without it (its data is then computed when the index is opened)`);
  if (buf.length < HEADER_BYTES || !buf.subarray(0, 8).equals(IMPACTS_MAGIC)) throw bad('bad magic');
  const [blockSize, fileTerms, blocks, pairs] = [words[2]!, words[3]!, words[4]!, words[5]!];
  if (blockSize !== IMPACT_BLOCK) throw bad(`block size ${blockSize}, this gpuindex reads ${IMPACT_BLOCK}`);
  if (fileTerms !== terms) throw bad(`${fileTerms} terms, the segment has ${terms}`);
  const expected = HEADER_BYTES + 4 * (terms + 1) + 4 * (4 * blocks + 1) + 8 * pairs;
  if (buf.length !== expected) throw bad(`${buf.length} bytes, its header says ${expected}`);
  let at = HEADER_BYTES / 4;
  const take = (n: number) => words.subarray(at, (at += n));
  const firstBlock = take(terms + 1);
  if (firstBlock[terms] !== blocks) throw bad(`its term table ends at block ${firstBlock[terms]} of ${blocks}`);
  const [lastDoc, gapsAt, tfsAt, firstPair] = [take(blocks), take(blocks), take(blocks), take(blocks + 1)];
  if (firstPair[blocks] !== pairs) throw bad(`its block table ends at pair ${firstPair[blocks]} of ${pairs}`);
  return { blockSize, firstBlock, lastDoc, gapsAt, tfsAt, firstPair, pairTf: take(pairs), pairLength: take(pairs) };
}
