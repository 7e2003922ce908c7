/**
 * An estimate of the memory held by what grows with the crawl, outside the --memory budget: the
 * term dictionary (main thread), the document table, and each parse worker's local dictionary
 * with its raw-token cache and the main thread's copy of its term strings (BatchRemapper).
 * Parse workers with lexicons of their own hold them inside the budget instead; the same
 * per-term figures weigh them against their share (workerLexiconBytes).
 *
 * It counts live V8 heap bytes (64-bit, pointer compression), calibrated by building each
 * structure in a fresh process and reading heapUsed after a full GC:
 *  - a string: 12 bytes of header plus its characters (1 byte each, 2 if any is above U+00FF),
 *    rounded up to 8;
 *  - a term of the main dictionary: its string + 55 bytes (Map entry and hash table at the
 *    average load, the `terms` array slot with growth slack): measured 79 B for 9-character terms;
 *  - a document: its external id and path strings + 23 bytes (two array slots and the u32 length,
 *    with growth slack): measured 87 B for 14- and 16-character strings; consecutive documents
 *    of one file share the path string (DocumentTable.add), counted once;
 *  - a worker-local term: in the worker its string + 55 (local dictionary) and the raw token's
 *    string + ~33 (raw-token cache slots), on the main thread a copy of the string + 12 (array
 *    slot, local-to-global id): measured 136 B per term in the worker for 8.5-character terms;
 *    plus 12 for the shared local-to-global table (shared-term-ids.ts: the shared words, the
 *    main thread's mirror and the worker's copy, 4 bytes each before growth slack).
 *    A worker whose pure-ASCII text goes through the WebAssembly scanner (the default) keeps
 *    its raw tokens there instead: its table's bytes (reported by the worker, exact) replace the
 *    raw token's string and the ~33 bytes of cache slots.
 *    Since workers send raw tokens (stemming is the main thread's), a worker keeps each local
 *    term's string in an array only (about 47 bytes less than the figures above) and the main
 *    thread keeps a raw token -> TermId Map (about 55 bytes a distinct raw token): left
 *    uncalibrated, the two roughly cancel (one worker: ~8 bytes a term under).
 *    The main dictionary keeps the first worker's copy of each term's string (not counted twice).
 *    Workers now send raw tokens as bytes (raw-token-list.ts), which the main thread keeps as
 *    bytes and a 4-byte end: about 20 bytes a token less than the string and slot counted here,
 *    left uncalibrated (the estimate is that much high).
 * Not counted: V8's heap slack (free space the heaps keep beyond their live data), so the
 * estimate is low rather than high and peak RSS minus it overstates the working set.
 */
import type { DocumentTable } from '../fill/documents.js';

const TERM_BYTES = 55;
const DOCUMENT_BYTES = 23;
const WORKER_TERM_BYTES = 112;
/** The part of WORKER_TERM_BYTES that is raw-token cache slots (JS scan only). */
const RAW_CACHE_SLOT_BYTES = 33;
const TWO_BYTE = /[^\x00-\xff]/;

/**
 * Terms whose strings are measured one by one; beyond, an even sample of this many stands for
 * them all. The loop runs once, at the end of a build, in code not yet optimized: over mail's
 * 109 K terms it took 7-9 ms of the build's last phase.
 */
const TERM_SAMPLE = 8192;

/** Heap bytes of a V8 string of this content (0 for the empty string, which is shared). */
export function stringBytes(s: string): number {
  if (s.length === 0) return 0;
  return Math.ceil((12 + s.length * (TWO_BYTE.test(s) ? 2 : 1)) / 8) * 8;
}

/**
 * Estimated heap bytes of a parse worker's own lexicon (fill/worker-lexicon.ts) of `terms` terms
 * holding `termUnits` UTF-16 units in all, with the scanner's raw-token tables (`scanBytes`,
 * exact): per term its string (header, characters, rounding) and the local-term overheads above
 * less the raw-token cache slots, which the scanner's tables replace.
 */
export function workerLexiconBytes(terms: number, termUnits: number, scanBytes: number): number {
  return terms * (16 + WORKER_TERM_BYTES - RAW_CACHE_SLOT_BYTES) + termUnits + scanBytes;
}

/**
 * Estimated bytes of the dictionary (`terms`: TermDictionary.terms), the document table and
 * the workers' local dictionaries (`workerTerms`: terms each worker numbered; `workerScanBytes`:
 * each worker's WebAssembly raw-token table bytes, 0 or absent where it used the JS scan).
 */
export function estimateDictionaryBytes(terms: readonly string[], documents: Pick<DocumentTable, 'externalIds' | 'paths'>, workerTerms: readonly number[] = [], workerScanBytes: readonly number[] = []): number {
  let termBytes = TERM_BYTES * terms.length;
  if (terms.length <= TERM_SAMPLE) {
    for (const t of terms) termBytes += stringBytes(t);
  } else {
    let sampled = 0;
    const step = terms.length / TERM_SAMPLE;
    for (let k = 0; k < TERM_SAMPLE; k++) sampled += stringBytes(terms[Math.floor(k * step)]!);
    termBytes += (sampled / TERM_SAMPLE) * terms.length;
  }
  let documentBytes = 0;
  const { externalIds, paths } = documents;
  for (let i = 0; i < externalIds.length; i++) {
    // A document with the path of the one before shares its string (DocumentTable.add).
    const sharedPath = i > 0 && paths[i] === paths[i - 1];
    documentBytes += stringBytes(externalIds[i]!) + (sharedPath ? 0 : stringBytes(paths[i]!)) + DOCUMENT_BYTES;
  }
  const averageString = terms.length > 0 ? (termBytes - TERM_BYTES * terms.length) / terms.length : 24;
  let local = 0;
  let workerBytes = 0;
  workerTerms.forEach((n, w) => {
    local += n;
    const scanBytes = workerScanBytes[w] ?? 0;
    // Per local term: worker string, raw-token string (or the scanner's memory), overheads.
    workerBytes += scanBytes > 0 ? n * (averageString + WORKER_TERM_BYTES - RAW_CACHE_SLOT_BYTES) + scanBytes : n * (2 * averageString + WORKER_TERM_BYTES);
  });
  // The main thread's copies of the strings beyond those the main dictionary holds (counted above).
  workerBytes += Math.max(0, local - terms.length) * averageString;
  return Math.round(termBytes + documentBytes + workerBytes);
}
