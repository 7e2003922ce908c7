/**
 * The (termID, docID) pairs a crawl's files are expected to give, from their sizes and kinds
 * alone: what the default pipeline choice weighs against the blocks the parse workers hold
 * (src/build/plan.ts). An expectation, not a bound: a crawl denser than its kind's rate is built
 * the same, only with the other sorter. Measured pairs a stored byte, which the rates follow:
 * text (JSONL) 0.18 for the synthetic crawl, 0.10 for mail, 0.09 for Moby-Dick; HTML 0.024 and
 * 0.028 for the html-docs crawls, 0.09 for Moby-Dick's chapters; a byte of .warc.gz 0.15
 * (html-docs) and 0.12 (the PostgreSQL sample); a byte of .jsonl.gz 0.45 (synthetic), 0.35 (mail).
 */
import { formatOfListed } from '../corpus/formats.js';

/** Expected pairs a stored byte, by format; gzipped files by the rate of their bytes as stored. */
export const PAIRS_PER_BYTE = {
  text: 0.15,
  /** Markup gives none: documentation and web pages hold a fifth to a quarter of their bytes in text. */
  html: 0.03,
  textGzip: 0.4,
  htmlGzip: 0.15,
} as const;

/** The rate of a file by its name: WARC holds web pages (HTML's rate), every other format text. */
function rateOf(name: string): number {
  const fmt = formatOfListed(name);
  const markup = fmt?.format === 'html' || fmt?.format === 'warc';
  if (fmt?.gzip) return markup ? PAIRS_PER_BYTE.htmlGzip : PAIRS_PER_BYTE.textGzip;
  return markup ? PAIRS_PER_BYTE.html : PAIRS_PER_BYTE.text;
}

/** The expected pairs of files `files` (a listing's: each of a format the readers take) of stored sizes `sizes`. */
export function expectedCrawlPairs(files: readonly string[], sizes: readonly number[]): number {
  let pairs = 0;
  for (let i = 0; i < files.length; i++) pairs += (sizes[i] ?? 0) * rateOf(files[i]!);
  return Math.ceil(pairs);
}
