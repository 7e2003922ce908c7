import { describe, expect, it } from 'vitest';
import { withEnv } from './helpers/env.js';
import { MapDelay, PREDICT_MIN_PAIRS } from '../gpu/map-delay.js';

const M = PREDICT_MIN_PAIRS; // 2^20
const work = (n: number) => n * Math.log2(n) ** 2;

describe('MapDelay (when GpuSort maps its readback after a submit)', () => {
  it('waits nothing before it has timed a large block, and never for small blocks', () => {
    const d = new MapDelay(false);
    expect(d.delayMs(4 * M)).toBe(0);
    d.learn(M / 2, 500); // a small block teaches nothing
    expect(d.delayMs(4 * M)).toBe(0);
    d.learn(M, 10);
    expect(d.delayMs(M - 1)).toBe(0);
  });

  it('waits 85 % of the time the large blocks took, scaled by n log2(n)^2, as a running mean, at most 1 s', () => {
    const d = new MapDelay(false);
    d.learn(M, 10);
    expect(d.delayMs(M)).toBeCloseTo(8.5, 9);
    // 2^24 pairs: (2^24 * 24^2) / (2^20 * 20^2) = 23.04 times the work.
    expect(d.delayMs(16 * M)).toBeCloseTo(10 * (work(16 * M) / work(M)) * 0.85, 6);
    d.learn(M, 30); // mean of 10 and 30 ms per 2^20 block
    expect(d.delayMs(M)).toBeCloseTo(17, 9);
    d.learn(M, 1e6);
    expect(d.delayMs(16 * M)).toBe(1000);
  });

  it('GPUINDEX_MAP_EARLY=1: maps at once; a bad value is a one-line error', () =>
    withEnv('GPUINDEX_MAP_EARLY', (set) => {
      set('1');
      const early = new MapDelay();
      early.learn(M, 10);
      expect(early.delayMs(16 * M)).toBe(0);
      set('2');
      expect(() => new MapDelay()).toThrow('GPUINDEX_MAP_EARLY must be an integer from 0 to 1, got 2');
    }));
});
