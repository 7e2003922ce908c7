/**
 * The growing vocabulary of gen-corpus: a word-rank law under which the number of distinct
 * words V after n words follows Heaps' law, V(n) ≈ K·n^β, without a largest rank.
 *
 * The law is a two-regime Zipf law: P(r) ∝ r^-s for ranks r ≤ R (s = 1.07, the fixed
 * vocabulary's exponent: the commonest words) and P(r) ∝ R^(a-s)·r^-a beyond (continuous at R),
 * with a = 1/β. A Zipf tail of exponent a gives V(n) ∝ n^(1/a) (Karlin, "Central limit theorems
 * for certain infinite urn schemes"); R sets K. R is chosen by least squares of log E[V(n)]
 * against log K·n^β at n = 2^16 … 2^31 words (a 400 KB to a 13 GB crawl), E[V(n)] = Σ_r
 * 1 − exp(−n·P(r)) computed by quadrature.
 *
 * Sampling is O(1): a coin between the two regimes, an alias table over ranks 1..R, and
 * rejection-inversion (Hörmann and Derflinger, "Rejection-inversion to generate variates from
 * monotone discrete distributions") over R+1..∞.
 */
import { UserError } from './shared/errors.js';

/** Heaps' law V(n) = K·n^β, n words read, V distinct words. */
export interface HeapsLaw {
  K: number;
  beta: number;
}

/**
 * Fitted to the real crawls (bench/heaps-fit.mjs --shuffle: the crawl read as `gpuindex build`
 * reads it, raw tokens of the default tokenizer, documents in a fixed random order; least
 * squares of log V on log n at doubling n from 2^13 tokens to the whole crawl). R is the
 * crossover rank calibrateCrossover() gives for them, kept here so that the bytes of a crawl
 * never hang on the last bits of a floating-point search.
 */
export const HEAPS_PRESETS: Record<'mail' | 'html-docs', HeapsLaw & { crossover: number }> = {
  // mail: 6,046 messages, 3,153,592 tokens, 123,570 distinct; RMS log error 0.064, at most 13 % off.
  mail: { K: 2.93, beta: 0.7167, crossover: 271 },
  // html-docs: 47,125 pages, 32,733,020 tokens, 199,197 distinct; RMS log error 0.146, at most 31 % off
  // (a few pages hold most of some part of the vocabulary: API indexes, changelogs).
  'html-docs': { K: 6.69, beta: 0.6023, crossover: 543 },
};

export type VocabularyGrowth = 'fixed' | keyof typeof HEAPS_PRESETS | HeapsLaw;

export const ZIPF_HEAD_S = 1.07;
/** Words per point of the calibration: 2^16 … 2^31. */
export const CALIBRATION_WORDS = Array.from({ length: 16 }, (_, i) => 2 ** (16 + i));
/** The largest RMS log error of a given law's calibration that gen-corpus accepts (about 5 %). */
export const MAX_CALIBRATION_ERROR = 0.05;
/** Ranks are capped here (a tail draw beyond is clamped): integers stay exact in a double. */
export const MAX_RANK = 2 ** 52;

/** Reads "K,beta" (e.g. "2.9,0.72"): K > 0, 0 < β < 1. */
export function parseHeaps(spec: string): HeapsLaw {
  const m = /^\s*([0-9]*\.?[0-9]+)\s*,\s*([0-9]*\.?[0-9]+)\s*$/.exec(spec);
  const law = m ? { K: Number(m[1]), beta: Number(m[2]) } : undefined;
  if (!law) throw new UserError(`--heaps: cannot read "${spec}" (expected K,beta, e.g. 2.93,0.7167)`);
  checkLaw(law);
  return law;
}

/** The CLI's --vocabulary and --heaps as one setting: one of them, or `fallback` when neither is given. */
export function parseGrowthOptions(vocabulary: string | undefined, heaps: string | undefined, fallback: VocabularyGrowth = 'fixed'): VocabularyGrowth {
  if (heaps !== undefined) {
    if (vocabulary !== undefined) throw new UserError('give --vocabulary or --heaps, not both');
    return parseHeaps(heaps);
  }
  if (vocabulary === undefined) return fallback;
  if (vocabulary !== 'fixed' && !Object.hasOwn(HEAPS_PRESETS, vocabulary)) throw new UserError(`--vocabulary: unknown "${vocabulary}" (known: fixed, ${Object.keys(HEAPS_PRESETS).join(', ')})`);
  return vocabulary as VocabularyGrowth;
}

function checkLaw(law: HeapsLaw): void {
  if (!(law.K > 0 && Number.isFinite(law.K))) throw new UserError(`--heaps: K must be a positive number, got ${law.K}`);
  if (!(law.beta >= 0.3 && law.beta <= 0.9)) throw new UserError(`--heaps: beta must be within 0.3 .. 0.9, got ${law.beta}`);
}

/** Σ r^-a for r = m .. M (M may be Infinity when a > 1): exact for 2,000 terms, then Euler-Maclaurin. */
export function powerSum(m: number, M: number, a: number): number {
  let s = 0;
  let r = m;
  const exactTo = Math.min(M, m + 2000);
  for (; r <= exactTo; r++) s += r ** -a;
  if (r > M) return s;
  const F = (x: number) => (a === 1 ? Math.log(x) : x ** (1 - a) / (1 - a));
  const fM = M === Infinity ? 0 : M ** -a;
  const dfr = -a * r ** (-a - 1);
  const dfM = M === Infinity ? 0 : -a * M ** (-a - 1);
  return s + (M === Infinity ? 0 : F(M)) - F(r) + (r ** -a + fM) / 2 + (dfM - dfr) / 12;
}

/** The two-regime law for a crossover R: its normalizing constant and the head's share. */
export interface RankLaw {
  crossover: number;
  headS: number;
  tailA: number;
  /** P(r) = c·r^-s for r ≤ R, c·R^(a-s)·r^-a beyond. */
  c: number;
  headShare: number;
}

export function rankLaw(law: HeapsLaw, crossover: number): RankLaw {
  const tailA = 1 / law.beta;
  const head = powerSum(1, crossover, ZIPF_HEAD_S);
  const tail = crossover ** (tailA - ZIPF_HEAD_S) * powerSum(crossover + 1, Infinity, tailA);
  const c = 1 / (head + tail);
  return { crossover, headS: ZIPF_HEAD_S, tailA, c, headShare: c * head };
}

/** P(r) of a rank law. */
export function rankProbability(l: RankLaw, r: number): number {
  return r <= l.crossover ? l.c * r ** -l.headS : l.c * l.crossover ** (l.tailA - l.headS) * r ** -l.tailA;
}

/** E[V(n)] = Σ_r 1 − exp(−n·P(r)): the first 2,000 ranks summed, the rest by Simpson's rule in log r. */
export function expectedDistinct(l: RankLaw, n: number): number {
  const { crossover: R, c, headS, tailA } = l;
  const tailC = c * R ** (tailA - headS);
  let v = 0;
  const exact = Math.min(R, 2000);
  for (let r = 1; r <= exact; r++) v -= Math.expm1(-n * c * r ** -headS);
  const f = (x: number) => -Math.expm1(-n * (x <= R + 0.5 ? c * x ** -headS : tailC * x ** -tailA));
  const integral = (lo: number, hi: number) => {
    const a = Math.log(lo);
    const steps = 2 * Math.max(8, Math.ceil((Math.log(hi) - a) * 48));
    const h = (Math.log(hi) - a) / steps;
    let s = 0;
    for (let i = 0; i <= steps; i++) {
      const x = Math.exp(a + i * h);
      s += (i === 0 || i === steps ? 1 : i % 2 ? 4 : 2) * f(x) * x;
    }
    return (s * h) / 3;
  };
  if (R > exact) v += integral(exact + 0.5, R + 0.5);
  const lo = Math.max(R, exact) + 0.5;
  // Beyond X every rank is nearly unseen: 1 - exp(-x) ≈ x, integrated in closed form.
  const X = Math.max(2 * lo, ((n * tailC) / 1e-9) ** (1 / tailA));
  return v + integral(lo, X) + (n * tailC * X ** (1 - tailA)) / (tailA - 1);
}

/** RMS of log E[V(n)] − log K·n^β over CALIBRATION_WORDS. */
export function calibrationError(law: HeapsLaw, crossover: number): number {
  const l = rankLaw(law, crossover);
  let s = 0;
  for (const n of CALIBRATION_WORDS) s += (Math.log(expectedDistinct(l, n)) - Math.log(law.K * n ** law.beta)) ** 2;
  return Math.sqrt(s / CALIBRATION_WORDS.length);
}

/** The crossover rank R (an integer, 1 .. 10^9) whose law fits K·n^β best: a coarse scan, then golden sections on log R. */
export function calibrateCrossover(law: HeapsLaw): { crossover: number; rmsLog: number } {
  checkLaw(law);
  const err = (logR: number) => calibrationError(law, Math.max(1, Math.round(Math.exp(logR))));
  const top = Math.log(1e9);
  let best = 0;
  let bestErr = Infinity;
  for (let t = 0; t <= top; t += 0.5) {
    const e = err(t);
    if (e < bestErr) (bestErr = e), (best = t);
  }
  let lo = Math.max(0, best - 0.5);
  let hi = Math.min(top, best + 0.5);
  const g = (Math.sqrt(5) - 1) / 2;
  for (let i = 0; i < 30; i++) {
    const a = hi - g * (hi - lo);
    const b = lo + g * (hi - lo);
    if (err(a) < err(b)) hi = b;
    else lo = a;
  }
  const crossover = Math.max(1, Math.round(Math.exp((lo + hi) / 2)));
  return { crossover, rmsLog: calibrationError(law, crossover) };
}

/** The law and crossover of a growth setting (the presets' stored crossover; a given law calibrated). */
export function resolveGrowth(growth: Exclude<VocabularyGrowth, 'fixed'>): { law: HeapsLaw; rankLaw: RankLaw; name: string } {
  if (typeof growth === 'string') {
    const p = Object.hasOwn(HEAPS_PRESETS, growth) ? HEAPS_PRESETS[growth] : undefined;
    if (!p) throw new UserError(`unknown vocabulary "${growth}" (known: fixed, ${Object.keys(HEAPS_PRESETS).join(', ')})`);
    return { law: p, rankLaw: rankLaw(p, p.crossover), name: growth };
  }
  checkLaw(growth);
  const { crossover, rmsLog } = calibrateCrossover(growth);
  // Some laws no rank law reaches (K·n^β above n at 2^16 words, or far below the 50,000 words' own curve).
  if (rmsLog > MAX_CALIBRATION_ERROR)
    throw new UserError(`--heaps ${growth.K},${growth.beta}: the generator cannot follow it (its best fit is off by ${(100 * (Math.exp(rmsLog) - 1)).toFixed(0)} % RMS over 2^16 .. 2^31 words; the presets are off by under 0.1 %)`);
  return { law: growth, rankLaw: rankLaw(growth, crossover), name: `heaps ${growth.K},${growth.beta}` };
}

// ---------------------------------------------------------------------------------------------
// Sampling.

/**
 * Rejection-inversion sampling of P(k) ∝ k^-a on the integers lo .. hi (hi = Infinity needs
 * a > 1): x drawn by inverting the integral H of the hat h(x) = x^-a, k = round(x), accepted
 * when u ≥ H(k + 1/2) − h(k). Expected draws per sample are close to 1.
 */
export class PowerLawSampler {
  private readonly uLow: number;
  private readonly uHigh: number;
  constructor(
    private readonly a: number,
    private readonly lo: number,
    private readonly hi: number,
  ) {
    if (hi === Infinity && !(a > 1)) throw new Error('an unbounded power law needs an exponent above 1');
    this.uLow = this.H(lo + 0.5) - lo ** -a;
    this.uHigh = hi === Infinity ? 0 : this.H(hi + 0.5);
  }
  private H(x: number): number {
    return this.a === 1 ? Math.log(x) : x ** (1 - this.a) / (1 - this.a);
  }
  private Hinv(y: number): number {
    return this.a === 1 ? Math.exp(y) : (y * (1 - this.a)) ** (1 / (1 - this.a));
  }
  /** A rank from uniforms in [0, 1) (two uint32 draws make one). */
  sample(uniform: () => number): number {
    for (;;) {
      const u = this.uLow + uniform() * (this.uHigh - this.uLow);
      const x = this.Hinv(u);
      let k = Math.floor(x + 0.5);
      if (k < this.lo) k = this.lo;
      else if (k > this.hi) k = this.hi;
      if (k > MAX_RANK) return MAX_RANK;
      if (u >= this.H(k + 0.5) - k ** -this.a) return k;
    }
  }
}
