/**
 * One parse worker's local term id -> global TermId table, in a growable SharedArrayBuffer that
 * the main thread writes (as it assigns global ids, in crawl order) and the worker reads (as it
 * builds batches). A worker writes the global id itself into each pair whose term the main
 * thread has already mapped, and marks the others (UNRESOLVED_BIT) and lists their indexes in
 * the batch; the main thread then copies a batch into a block with one memcpy and fixes only
 * the listed pairs, where it used to look every pair up (10-14 ns a pair on the main thread, the
 * stage that bounded Indexgpu+ on the H100 machine). With one worker, the worker
 * is what bounds the build and it leaves every pair to the main thread (ParsedBatch.localIds).
 *
 * Layout: word 0 is the watermark (local ids below it are all mapped: the main thread maps a
 * worker's ids in increasing order, as it takes the worker's batches in the order they were
 * made), then one word per local id holding global id + 1, so the zeros of fresh memory read as
 * "not mapped yet". The worker does not read the shared words pair by pair: it copies the mapped
 * prefix into its own array when the watermark moves (KnownTermIds), so its hot loop reads
 * private memory instead of lines the main thread keeps writing.
 */
import { grown } from '../../runtime/grown.js';

/** Set in a pair's term word when the worker could not resolve it: the rest is the local id. */
export const UNRESOLVED_BIT = 0x80000000;

/**
 * Local ids a worker's shared table holds: 2^24 (64 MiB of address space reserved per worker,
 * committed only as it grows). Ids beyond it are never shared: the worker leaves their pairs
 * unresolved and the main thread maps them from its mirror, as it maps new terms (slower, same ids).
 */
const SHARED_LOCAL_IDS = 1 << 24;
const INITIAL_WORDS = 1 << 16;

export function newSharedTermIds(sharedIds = SHARED_LOCAL_IDS): SharedArrayBuffer {
  return new SharedArrayBuffer(4 * Math.min(INITIAL_WORDS, sharedIds + 1), { maxByteLength: 4 * (sharedIds + 1) });
}

/** The main thread's view of a worker's table. */
export class SharedTermIds {
  /** Length-tracking view of the shared words (written only: V8 reads such views slowly). */
  private readonly words: Int32Array;
  /** The main thread's private copy: ids[local] = global id + 1, 0 while unmapped. */
  private ids = new Int32Array(1024);
  private watermark = 0;

  /**
   * `published`: whether the worker reads the table (ParseWorkerInit.resolveIds); if not, set()
   * keeps the mapping here only (one worker: mail's 127 K local ids, ~20 ms of this thread).
   */
  constructor(
    readonly buffer: SharedArrayBuffer,
    private readonly published = true,
  ) {
    this.words = new Int32Array(buffer);
  }

  /** The global id of `local`, or -1 while it is not mapped. */
  get(local: number): number {
    return local < this.ids.length ? this.ids[local]! - 1 : -1;
  }

  /** Records local -> global (growing the table to hold `local`) and publishes the watermark. */
  set(local: number, global: number): void {
    if (local >= this.ids.length) this.ids = grown(this.ids, local + 1);
    this.ids[local] = global + 1;
    if (!this.published) return;
    const words = this.words;
    if (local + 1 >= words.length && !this.growTo(local + 2)) return; // beyond the shared part
    words[local + 1] = global + 1;
    if (local !== this.watermark) return;
    const ids = this.ids;
    let w = local + 1;
    while (w < ids.length && w + 1 < words.length && ids[w] !== 0) w++;
    this.watermark = w;
    Atomics.store(words, 0, w);
  }

  /** Grows the shared words to at least `words`; false when that is past the buffer's maximum. */
  private growTo(words: number): boolean {
    const max = this.buffer.maxByteLength / 4;
    if (words > max) return false;
    let size = this.words.length;
    while (size < words) size *= 2;
    this.buffer.grow(4 * Math.min(size, max));
    return true;
  }

  /** Bytes of the shared words as grown so far (the memory estimate counts a constant per term instead). */
  get bytes(): number {
    return this.buffer.byteLength;
  }
}

/** The worker's private copy of its table's mapped prefix. */
export class KnownTermIds {
  private readonly shared: Int32Array;
  /** ids[local] = global id + 1 for local < count, 0 beyond. */
  ids = new Int32Array(1024);
  count = 0;

  constructor(buffer: SharedArrayBuffer) {
    this.shared = new Int32Array(buffer);
  }

  /** Takes in the ids mapped since the last call (cheap when none were). */
  refresh(): void {
    const watermark = Atomics.load(this.shared, 0);
    if (watermark <= this.count) return;
    if (watermark > this.ids.length) this.ids = grown(this.ids, watermark, this.count);
    this.ids.set(this.shared.subarray(1 + this.count, 1 + watermark), this.count);
    this.count = watermark;
  }
}
