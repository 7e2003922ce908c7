/**
 * The blocks a parse worker fills itself when it keeps its own lexicon (WorkerLexicon): pairs
 * of (its term id, its document number), documents numbered in the order the worker parses
 * them (its tasks come in crawl order, so the merge maps the numbers to docIDs with one
 * increasing table, RunLexicon.docIds). A full block is sealed with the lexicon's ranks so far
 * (lexKeys) and either sorted and written as a run here (the CPU sorter: each worker sorts its
 * own blocks, in parallel) or handed to the GPU thread through the main thread (`handOver`);
 * with two blocks the worker fills one while the other is sorted (Indexgpu+).
 */
import { join } from 'node:path';
import { writeRunFile } from '../../merge/runs.js';
import { radixSortPairs } from '../sort/cpu-sorter.js';
import { grown } from '../../runtime/grown.js';
import { alignPositions, positionsPathOf, writeRunPositions } from '../../merge/run-positions.js';
import { positionOf } from './block-positions.js';
import type { WorkerLexicon } from './worker-lexicon.js';

export interface WorkerBlocksConfig {
  /** This worker's index: its runs' names, and its lexicon's in the merge. */
  worker: number;
  runDir: string;
  blockPairs: number;
  /** 2: fill one while the other is sorted (the overlapped schedule); 1: wait for each sort. */
  blocks: number;
  /** Sort and write runs on this thread (CPU sorter) rather than hand blocks over. */
  sortHere: boolean;
  /** --positions: each run gets its positions file; `titleWeight` places them (block-positions.ts). */
  positions?: { titleWeight: number };
}

/** A run this worker wrote (sortHere). */
export interface WrittenRun {
  path: string;
  /** The lexicon generation its keys belong to (WorkerLexicon.generation). */
  generation: number;
  pairs: number;
  runBytes: number;
  keySpace: number;
  sortMs: number;
  writeMs: number;
}

/** A sealed block for the GPU thread: `pairs` is shared; `keys` is the lexicon's ranks at the seal. */
export interface HandedBlock {
  block: number;
  buffer: SharedArrayBuffer;
  count: number;
  keys: Uint32Array;
  /** The lexicon generation its keys belong to (WorkerLexicon.generation). */
  generation: number;
  /** --positions: the block's positions in its sorted order (alignPositions), for the run's positions file. */
  positions?: Uint32Array;
}

/** Words of scratch touchScratch touches at a time: 1 MiB. */
const TOUCH_STEP_WORDS = 1 << 18;

export class WorkerBlocks {
  private readonly blocks: Uint32Array[];
  /** --positions: each block's pairs' positions, in fill order. */
  private readonly positionBlocks?: Uint32Array[];
  private overflowPositions = new Uint32Array(0);
  private readonly busy: boolean[];
  private wake?: () => void;
  private current = 0;
  /** Pairs in the current block. */
  private count = 0;
  /** Document numbers given so far. */
  documents = 0;
  /** The pairs of a document that did not fit the block, for the next one. */
  private overflow = new Uint32Array(0);
  private overflowWords = 0;
  private scratch?: Uint32Array;
  /**
   * Words of the first sort's scratch touched so far, while the worker fills its first block
   * (undefined after it): see touchScratch.
   */
  private scratchTouched?: number = 0;
  private runs = 0;
  private failure?: Error;
  /**
   * Milliseconds this worker waited for a block it handed over to come back: while parsing (the
   * block to fill next was still being sorted), and at its end (finish: every block written).
   */
  blockWaitMs = 0;
  endWaitMs = 0;

  constructor(
    private readonly config: WorkerBlocksConfig,
    private readonly lexicon: WorkerLexicon,
    private readonly onRun: (run: WrittenRun) => void,
    private readonly handOver: (block: HandedBlock) => void,
  ) {
    const words = 2 * config.blockPairs;
    this.blocks = Array.from({ length: config.blocks }, () => new Uint32Array(config.sortHere ? new ArrayBuffer(4 * words) : new SharedArrayBuffer(4 * words)));
    this.busy = new Array<boolean>(config.blocks).fill(false);
    // One block handed over to be sorted elsewhere has no scratch here until the last: none to touch ahead.
    if (config.blocks === 1 && !config.sortHere) this.scratchTouched = undefined;
    if (config.positions) this.positionBlocks = Array.from({ length: config.blocks }, () => new Uint32Array(config.blockPairs));
  }

  /**
   * Adds a document of `n` raw token ids (`rawIds`, mapped through `termOfRaw`) under the next
   * document number. Returns true when the block is full: the caller must then await seal().
   */
  add(rawIds: Uint32Array, n: number, termOfRaw: Uint32Array, titleLength = 0): boolean {
    const doc = this.documents++;
    const pairs = this.blocks[this.current]!;
    let p = 2 * this.count;
    const cap = pairs.length;
    const positions = this.positionBlocks?.[this.current];
    const titleWeight = this.config.positions?.titleWeight ?? 1;
    if (positions) for (let i = 0, q = this.count; i < n && q < this.config.blockPairs; i++) positions[q++] = positionOf(i, titleLength, titleWeight);
    let i = 0;
    for (; i < n && p < cap; i++) {
      pairs[p++] = termOfRaw[rawIds[i]!]!;
      pairs[p++] = doc;
    }
    this.count = p >> 1;
    if (this.scratchTouched !== undefined && p > this.scratchTouched) this.touchScratch(p);
    if (i === n) return p === cap;
    if (positions) {
      const o = this.overflowWords >> 1;
      if (o + (n - i) > this.overflowPositions.length) this.overflowPositions = grown(this.overflowPositions, o + (n - i), o);
      for (let k = i, q = o; k < n; k++) this.overflowPositions[q++] = positionOf(k, titleLength, titleWeight);
    }
    // The rest goes to the next block: the merge adds a document's counts across runs.
    let o = this.overflowWords;
    if (o + 2 * (n - i) > this.overflow.length) this.overflow = grown(this.overflow, o + 2 * (n - i), o);
    const over = this.overflow;
    for (; i < n; i++) {
      over[o++] = termOfRaw[rawIds[i]!]!;
      over[o++] = doc;
    }
    this.overflowWords = o;
    return true;
  }

  /** Seals the current block if it holds pairs, moves to a free block, and puts any overflow in it. */
  async seal(): Promise<void> {
    await this.sealCurrent();
    let from = 0;
    while (from < this.overflowWords) {
      const pairs = this.blocks[this.current]!;
      const n = Math.min(this.overflowWords - from, pairs.length - 2 * this.count);
      this.positionBlocks?.[this.current]!.set(this.overflowPositions.subarray(from >> 1, (from + n) >> 1), this.count);
      pairs.set(this.overflow.subarray(from, from + n), 2 * this.count);
      this.count += n >> 1;
      from += n;
      if (2 * this.count === pairs.length) await this.sealCurrent();
    }
    this.overflowWords = 0;
  }

  /**
   * Seals what is left and waits until every block handed over is written. The last block is
   * sorted and written here whatever the sorter: every worker ends at about the same moment,
   * and their last blocks would otherwise queue for the one GPU thread after the parse (15 of
   * them took ~1 s on the 16-core machine), where sorting them on their own threads overlaps.
   */
  async finish(): Promise<void> {
    if (this.overflowWords > 0) await this.seal();
    this.endWaitMs += await this.waitWhile(() => this.busy.some((b) => b));
    if (this.failure) throw this.failure;
    if (this.count > 0) {
      // Every other block is free now: one of them is the sort's scratch.
      const spare = this.blocks.find((_, i) => i !== this.current);
      if (spare && !this.scratch) this.scratch = new Uint32Array(spare.buffer, 0, spare.length);
      this.sortAndWrite(this.current, this.count, this.lexicon.dictionary.lexKeys());
      this.count = 0;
    }
  }

  /**
   * Seals every pair filled so far, the overflow too: then no pair waits on the lexicon's
   * current generation, which may be closed (WorkerLexicon.restart).
   */
  async sealAll(): Promise<void> {
    await this.seal();
    await this.sealCurrent();
  }

  /** The main thread reports block `block` written (or failed): it may be filled again. */
  done(block: number, error?: string): void {
    this.busy[block] = false;
    if (error !== undefined) this.failure ??= new Error(error);
    this.wake?.();
  }

  /** The pool closes early: a wait for a block's return ends with `error` instead. */
  abandon(error: Error): void {
    this.failure ??= error;
    this.wake?.();
  }

  /**
   * Touches the pages of the scratch the worker's first sort will use, up to `words` and a step
   * ahead, as its first block fills: a first touch of fresh memory is a page fault, and a crawl
   * that fits the workers' first blocks sorts them all at once at the parse's end, where 15
   * workers' faults on 20 MB of scratch each (the HTML crawl on 16 cores) meet on the critical
   * path. Spread over the parse they cost the same and wait for nothing. After the first block
   * the scratch (or the spare block, with two) has been written already. The scratch is what the
   * plan counts (sortHere: a block's worth), allocated now instead of at the first sort.
   */
  private touchScratch(words: number): void {
    const target = this.config.blocks > 1 ? this.blocks[1]! : (this.scratch ??= new Uint32Array(this.blocks[0]!.length));
    const to = Math.min(target.length, words + TOUCH_STEP_WORDS);
    target.fill(0, this.scratchTouched, to);
    this.scratchTouched = to;
  }

  private async sealCurrent(): Promise<void> {
    this.scratchTouched = undefined;
    if (this.count > 0) {
      const count = this.count;
      const pairs = this.blocks[this.current]!;
      const keys = this.lexicon.dictionary.lexKeys();
      if (this.config.sortHere) this.sortAndWrite(this.current, count, keys);
      else {
        this.busy[this.current] = true;
        const positions = this.alignedPositions(this.current, count, keys);
        this.handOver({ block: this.current, buffer: pairs.buffer as SharedArrayBuffer, count, keys, generation: this.lexicon.generation, ...(positions ? { positions } : {}) });
      }
      this.count = 0;
      this.current = (this.current + 1) % this.blocks.length;
    }
    this.blockWaitMs += await this.waitWhile(() => this.busy[this.current]!);
    if (this.failure) throw this.failure;
  }

  /** --positions: block `block`'s positions in the order its sort will give (before the sort, which may reorder it in place). */
  private alignedPositions(block: number, count: number, keys: Uint32Array): Uint32Array | undefined {
    const positions = this.positionBlocks?.[block];
    return positions && alignPositions(this.blocks[block]!, count, positions, keys);
  }

  private sortAndWrite(block: number, count: number, keys: Uint32Array): void {
    const pairs = this.blocks[block]!;
    const positions = this.alignedPositions(block, count, keys);
    const t0 = performance.now();
    if (!this.scratch || this.scratch.length < 2 * count) this.scratch = new Uint32Array(pairs.length);
    const sorted = radixSortPairs(pairs, count, this.scratch, keys);
    const t1 = performance.now();
    const path = join(this.config.runDir, `run-w${String(this.config.worker).padStart(3, '0')}-${String(this.runs++).padStart(6, '0')}.bin`);
    const runBytes = writeRunFile(path, sorted, count, keys.length);
    if (positions) writeRunPositions(positionsPathOf(path), positions, count);
    this.onRun({ path, generation: this.lexicon.generation, pairs: count, runBytes, keySpace: keys.length, sortMs: t1 - t0, writeMs: performance.now() - t1 });
  }

  /** Waits for wakes while `pending()` and nothing failed; the milliseconds it waited (0 where it did not). */
  private async waitWhile(pending: () => boolean): Promise<number> {
    if (!pending() || this.failure) return 0;
    const t0 = performance.now();
    while (pending() && !this.failure) await this.waitForWake();
    return performance.now() - t0;
  }

  private waitForWake(): Promise<void> {
    return new Promise<void>((resolve) => (this.wake = resolve));
  }
}
