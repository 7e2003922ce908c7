/**
 * A block's document bases on the CPU (the CPU sorter, and a GPU fault's fallback): the same
 * work as the GPU's doc-base pass (gpu/kernels/doc-base.wgsl).
 */
import type { DocBases } from '../../src/shared/types.js';
import { grown } from '../../runtime/grown.js';

/** Adds each segment's base to the docID words of pairs[0 .. count) in place. */
export function applyDocBases(pairs: Uint32Array, count: number, docBases: DocBases): void {
  for (let k = 0; k < docBases.length; k += 2) {
    const base = docBases[k + 1]!;
    if (base === 0) continue;
    const end = 2 * (k + 2 < docBases.length ? Math.min(docBases[k + 2]!, count) : count);
    for (let o = 2 * docBases[k]! + 1; o < end; o += 2) pairs[o] += base;
  }
}

/** Document-base segments collected while a block fills (one per batch copied into it). */
export class DocBaseSegments {
  private flat = new Uint32Array(512);
  private length = 0;

  /** Pairs from `start` on (until the next segment) hold documents numbered from `base`. */
  add(start: number, base: number): void {
    if (this.length > 0 && this.flat[this.length - 1] === base) return; // same batch, continued
    if (this.length === this.flat.length) this.flat = grown(this.flat, this.length + 2);
    this.flat[this.length++] = start;
    this.flat[this.length++] = base;
  }

  clear(): void {
    this.length = 0;
  }

  /** The segments so far (a view: valid until the next add or clear). */
  get bases(): DocBases {
    return this.flat.subarray(0, this.length);
  }
}
