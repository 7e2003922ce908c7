/**
 * How long GpuSort waits after a submit before it maps the readback. dawn.node ticks the
 * device in a setImmediate loop for as long as any mapAsync is pending (its AsyncRunner): a
 * map requested right after the submit turns the block's whole GPU time into a busy main
 * thread, plus garbage for V8's helper threads, all taken from the parse workers. So the map
 * waits for most of the GPU time the earlier large blocks took, scaled by the network's work.
 */
import { integerFromEnv } from '../runtime/env-knobs.js';

/** The share of the expected GPU time to wait: under 1, so a block faster than the last ones waits a little, not long. */
const EXPECTED_GPU_FRACTION = 0.85;
/** Blocks this large predict and are predicted; in smaller ones fixed costs dominate, and their wait is short anyway. */
export const PREDICT_MIN_PAIRS = 1 << 20;
const MAX_DELAY_MS = 1000;

/** The bitonic network's work on n pairs, n log2(n)^2, to which the GPU time is taken as proportional. */
const sortWork = (n: number): number => n * Math.log2(n) ** 2;

export class MapDelay {
  /** GPU wall ms (submit to readback mapped) per unit of sortWork() of the large blocks so far (a running mean); 0 before the first. */
  private msPerWork = 0;

  /** `mapEarly`: never wait (GPUINDEX_MAP_EARLY=1, for A/B runs against the old behaviour). */
  constructor(private readonly mapEarly = integerFromEnv('GPUINDEX_MAP_EARLY', 0, 1) === 1) {}

  /** Milliseconds to wait before mapping the readback of a block of `pairs`. */
  delayMs(pairs: number): number {
    if (this.mapEarly || pairs < PREDICT_MIN_PAIRS) return 0;
    return Math.min(MAX_DELAY_MS, this.msPerWork * sortWork(pairs) * EXPECTED_GPU_FRACTION);
  }

  /** Records that a block of `pairs` took `gpuMs` from submit to its readback mapped. */
  learn(pairs: number, gpuMs: number): void {
    if (pairs < PREDICT_MIN_PAIRS) return;
    const msPerWork = gpuMs / sortWork(pairs);
    this.msPerWork = this.msPerWork === 0 ? msPerWork : (this.msPerWork + msPerWork) / 2;
  }
}
