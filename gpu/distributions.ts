/**
 * Test and benchmark data: blocks of pairs drawn from the distributions the sorters must
 * handle (deterministic for a seed).
 */
export const DISTRIBUTIONS = ['uniform', 'gaussian', 'zipf', 'all-equal', 'sorted', 'reverse', 'few-terms'] as const;
export type Distribution = (typeof DISTRIBUTIONS)[number];

function rng(seed: number): () => number {
  let s = (seed ^ 0x9e3779b9) >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

/** n pairs interleaved (termID, docID). docIDs are random, so no sorter can skip them. */
export function makePairs(dist: Distribution, n: number, seed = 1): Uint32Array {
  const r = rng(seed);
  const out = new Uint32Array(2 * n);
  const vocab = 1 << 20;
  for (let i = 0; i < n; i++) {
    let t: number;
    switch (dist) {
      case 'uniform':
        t = Math.floor(r() * 2 ** 32);
        break;
      case 'gaussian': {
        const g = Math.sqrt(-2 * Math.log(r() || 1e-12)) * Math.cos(2 * Math.PI * r());
        t = Math.max(0, Math.min(2 ** 32 - 1, Math.round(2 ** 31 + g * 2 ** 28)));
        break;
      }
      case 'zipf':
        // Inverse-CDF approximation of a Zipf(1) law over a 2^20-term vocabulary.
        t = Math.min(vocab - 1, Math.floor(Math.exp(r() * Math.log(vocab))) - 1);
        break;
      case 'all-equal':
        t = 7;
        break;
      case 'sorted':
        t = i;
        break;
      case 'reverse':
        t = n - i;
        break;
      case 'few-terms':
        t = Math.floor(r() * 5);
        break;
    }
    out[2 * i] = t;
    out[2 * i + 1] = dist === 'all-equal' ? 7 : dist === 'sorted' || dist === 'reverse' ? (dist === 'sorted' ? i : n - i) : Math.floor(r() * 2 ** 32);
  }
  return out;
}
