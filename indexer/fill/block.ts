/**
 * A fixed-size block of (termID, docID) pairs being filled by the parser (BSBI's "block").
 * When full, the owner hands `pairs`/`count` to a sorter and starts a fresh block.
 */
import type { DocId, TermId } from '../../src/shared/types.js';
import { DocBaseSegments } from './doc-bases.js';
import type { BufferPool } from '../../runtime/buffer-pool.js';

export class PairBlockBuilder {
  readonly pairs: Uint32Array;
  count = 0;
  /** Where pairs hold batch-local document indexes, the bases that make them DocIds (for the sorter). */
  readonly docBases = new DocBaseSegments();

  /** --positions: each pair's position in its document, in fill order (block-positions.ts). */
  readonly positions?: Uint32Array;

  /**
   * `shared`: the block lives in a SharedArrayBuffer, for a sorter on another thread (PairSorter.sharedBlocks).
   * `positions`: the block keeps each pair's position too. `pool`: where its buffer comes from (not shared).
   */
  constructor(readonly capacity: number, shared = false, positions = false, pool?: BufferPool) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`block size must be a positive integer, got ${capacity}`);
    this.pairs = shared ? new Uint32Array(new SharedArrayBuffer(8 * capacity)) : new Uint32Array(pool ? pool.take(8 * capacity) : new ArrayBuffer(8 * capacity), 0, 2 * capacity);
    if (positions) this.positions = new Uint32Array(capacity);
  }

  /** Empties the block for reuse. */
  reset(): void {
    this.count = 0;
    this.docBases.clear();
  }

  get full(): boolean {
    return this.count === this.capacity;
  }

  /** A document's TermIds, all with `docId`; the caller checks they leave the block short of full. */
  pushDocument(termIds: Uint32Array, docId: DocId): void {
    const pairs = this.pairs;
    let at = this.count << 1;
    for (let i = 0; i < termIds.length; i++) {
      pairs[at++] = termIds[i]!;
      pairs[at++] = docId;
    }
    this.count += termIds.length;
  }

  push(termId: TermId, docId: DocId): void {
    const i = this.count++ << 1;
    this.pairs[i] = termId;
    this.pairs[i + 1] = docId;
  }
}
