/**
 * `bench-sort`'s warm-up before each GPU measurement: sort until the times are steady. The GPU's
 * clocks drop while it idles, e.g. for the seconds the CPU sorter takes between sizes; a sweep
 * warmed only 300 ms a size measured 2^23–2^25 at 2–3x a dedicated run's kernel times (H100
 * machine, 2^24 zipf: 17.5 ms in the sweep, 5.4 ms alone).
 *
 * Steady is not full clocks. On the H200 machine (nvidia-smi sampled every 50 ms) the SM clock
 * fell to 345 MHz while the CPU sorter ran and rose only to 0.6–1.0 GHz under bench-sort's
 * stop-and-go load (30–60 % utilization) before the times were steady; after 3 s of warm-up it
 * was 1.3–1.7 GHz, falling, against 1.98 GHz in a dedicated run's first second. 2^24 zipf kernel
 * ms: 4.85 alone, 8.2–10.1 in a sweep with this warm-up, 7.0 with --warm-min-ms 3000, 6.1–12.9
 * warmed 300 ms; 2^25: 30.3–30.6, 11.3–13.8 with 3 s, 31.6–35.2 with 300 ms.
 */

export interface WarmupRule {
  /** The last `window` times must be within `tolerance` of each other (max − min ≤ tolerance × min). */
  window: number;
  tolerance: number;
  /** Warm at least this long, as before (the clocks take time to rise). */
  minMs: number;
  /** Give up (not steady) after this many rounds or this long. */
  maxRounds: number;
  maxMs: number;
}

export const DEFAULT_WARMUP: Readonly<WarmupRule> = Object.freeze({ window: 3, tolerance: 0.05, minMs: 300, maxRounds: 500, maxMs: 10_000 });

export interface Warmup {
  /** Sorts run to warm up. */
  rounds: number;
  /** Wall time they took. */
  ms: number;
  /** Whether the last `window` times were within `tolerance` when it ended (else a cap ended it). */
  steady: boolean;
}

/** Whether the last `window` of `times` are within `tolerance` of each other. */
export function isSteady(times: readonly number[], window: number, tolerance: number): boolean {
  if (times.length < window) return false;
  const last = times.slice(-window);
  const min = Math.min(...last);
  const max = Math.max(...last);
  return Number.isFinite(min) && min > 0 && max - min <= tolerance * min;
}

/**
 * Runs `round` (one sort; it returns the time to judge, e.g. the kernel ms) until the times are
 * steady and `minMs` has passed, or until a cap. `now` is the clock (a test passes its own).
 */
export async function warmUntilSteady(round: () => Promise<number>, rule: WarmupRule = DEFAULT_WARMUP, now: () => number = () => performance.now()): Promise<Warmup> {
  const start = now();
  const times: number[] = [];
  for (;;) {
    times.push(await round());
    const ms = now() - start;
    const steady = isSteady(times, rule.window, rule.tolerance);
    if ((steady && ms >= rule.minMs) || times.length >= rule.maxRounds || ms >= rule.maxMs) return { rounds: times.length, ms: Math.round(ms), steady };
  }
}

export interface Spread {
  min: number;
  median: number;
  max: number;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** min / median / max of the timed repetitions, rounded to 0.01. */
export function spreadOf(xs: readonly number[]): Spread {
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return { min: r2(Math.min(...xs)), median: r2(median(xs)), max: r2(Math.max(...xs)) };
}
