/**
 * --positions: a run's positions, beside it (`run-….pos`): one u32 a pair, little-endian, in
 * the run's pair order, so the merge reads them in step with the pairs (docs/architecture.md
 * "Positions").
 *
 * The sort moves only 64-bit (key, docID) pairs, so the positions are put in the sorted order
 * apart from it (alignPositions): a block is filled in (docID, position) order, so sorting its
 * pairs by (key, docID) orders each key's occurrences exactly as a stable sort of the fill order
 * by key alone would. That sort is a counting sort: each key's first slot from the keys' counts,
 * then every position dropped into its key's next slot, in fill order. It needs neither the
 * sorter's output nor the sorter (CPU or GPU: the same positions).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { readFullAt } from '../runtime/read-at.js';

/** The position of a title's repeated copies' pairs: they take part in tf, not in positions (indexer/fill/block-positions.ts). */
export const NO_POSITION = 0xffffffff;

/** The positions file of run file `runPath`. */
export const positionsPathOf = (runPath: string): string => runPath.replace(/\.bin$/, '') + '.pos';

/**
 * The fill-order `positions` of pairs[0 .. 2*count) in the order a sort by (key, docID) gives
 * the pairs, where a pair's key is keys[termId] (or the termId itself without `keys`). The
 * block's docIDs must not decrease in fill order (a block is filled in crawl order; document
 * bases added later keep that).
 */
export function alignPositions(pairs: Uint32Array, count: number, positions: Uint32Array, keys?: Uint32Array): Uint32Array {
  let space = keys ? keys.length : 0;
  if (!keys) for (let i = 0; i < count; i++) space = Math.max(space, pairs[2 * i]! + 1);
  const next = new Uint32Array(space + 1);
  if (keys) for (let i = 0; i < count; i++) next[keys[pairs[2 * i]!]! + 1]!++;
  else for (let i = 0; i < count; i++) next[pairs[2 * i]! + 1]!++;
  for (let k = 1; k <= space; k++) next[k]! += next[k - 1]!;
  const out = new Uint32Array(count);
  if (keys) for (let i = 0; i < count; i++) out[next[keys[pairs[2 * i]!]!]!++] = positions[i]!;
  else for (let i = 0; i < count; i++) out[next[pairs[2 * i]!]!++] = positions[i]!;
  return out;
}

function bytesOf(a: Uint32Array, count: number): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, count * 4);
}

export function writeRunPositions(path: string, aligned: Uint32Array, count: number): void {
  const fd = openSync(path, 'w');
  try {
    const body = bytesOf(aligned, count);
    let off = 0;
    while (off < body.length) off += writeSync(fd, body, off, Math.min(body.length - off, 1 << 30));
  } finally {
    closeSync(fd);
  }
}

/** writeRunPositions on the thread pool (the fill goes on meanwhile). */
export async function writeRunPositionsAsync(path: string, aligned: Uint32Array, count: number): Promise<void> {
  const file = await open(path, 'w');
  try {
    const body = bytesOf(aligned, count);
    let off = 0;
    while (off < body.length) off += (await file.write(body, off, Math.min(body.length - off, 8 << 20), off)).bytesWritten;
  } finally {
    await file.close();
  }
}

/** A forward reader of a run's positions, in chunks, in step with a RunCursor over the run. */
export class RunPositionsReader {
  private readonly fd: number;
  private readonly chunk: Uint32Array;
  private loaded = 0;
  private at = 0;
  /** Positions read from the file so far (those of chunks before this one included). */
  private consumed = 0;

  /** `first`: the pair the reader starts at (a merge thread's range of the run); `count` positions from there. */
  constructor(readonly path: string, private readonly count: number, chunkPositions: number, private readonly first = 0) {
    this.fd = openSync(path, 'r');
    this.chunk = new Uint32Array(Math.max(1, Math.min(chunkPositions, count)));
  }

  /**
   * Copies the next `n` positions but those equal to `skip` into out[used ..] (room for n);
   * returns the new end.
   */
  copyInto(out: Uint32Array, used: number, n: number, skip: number): number {
    while (n > 0) {
      if (this.at === this.loaded) this.load();
      const c = this.chunk;
      const end = Math.min(this.loaded, this.at + n);
      n -= end - this.at;
      for (let i = this.at; i < end; i++) {
        const p = c[i]!;
        if (p !== skip) out[used++] = p;
      }
      this.at = end;
    }
    return used;
  }

  private load(): void {
    this.consumed += this.loaded;
    const n = Math.min(this.chunk.length, this.count - this.consumed);
    if (n <= 0) throw new Error(`${this.path}: more pairs than positions`);
    const bytes = new Uint8Array(this.chunk.buffer, 0, 4 * n);
    if (readFullAt(this.fd, bytes, 4 * (this.first + this.consumed)) < bytes.length) throw new Error(`${this.path}: positions file is truncated`);
    this.loaded = n;
    this.at = 0;
  }

  close(): void {
    if (!this.closed) {
      this.closed = true;
      closeSync(this.fd);
    }
  }
  private closed = false;
}
