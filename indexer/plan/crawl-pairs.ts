/**
 * The most (termID, docID) pairs a crawl's files can plausibly give, from their sizes alone:
 * what the default pipeline choice weighs against the blocks the parse workers hold
 * (src/build/plan.ts). A bound for real text, not an estimate. Measured pairs a byte: the
 * synthetic crawl 0.18 (0.45 a byte of it gzipped), mail 0.10 (0.35 gzipped), the html-docs
 * crawl 0.024 (its markup gives none; 0.15 a byte of its .warc.gz).
 */

/** Pairs a byte at most: a pair is a distinct term of a document, a word and its separator. */
export const PAIRS_PER_BYTE_BOUND = 0.25;
/** Pairs a gzipped byte at most: text gzips 2.5-5x, and the densest crawl above gives 0.45. */
export const PAIRS_PER_GZIP_BYTE_BOUND = 1;

const GZ = /\.gz$/i;

/** The bound for the listing's files `files` (each of a format the readers take) of sizes `sizes`, bytes as stored. */
export function crawlPairsBound(files: readonly string[], sizes: readonly number[]): number {
  let pairs = 0;
  for (let i = 0; i < files.length; i++) pairs += (sizes[i] ?? 0) * (GZ.test(files[i]!) ? PAIRS_PER_GZIP_BYTE_BOUND : PAIRS_PER_BYTE_BOUND);
  return Math.ceil(pairs);
}
