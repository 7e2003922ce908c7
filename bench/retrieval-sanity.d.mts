/** Types of bench/retrieval-sanity.mjs. */
import type { IndexReader } from '../src/reader.js';

export const SANITY_TOKENIZER: string;

export interface SanityDocument {
  externalId: string;
  path?: string;
  title?: string;
  text: string;
}

export interface SanityMismatch {
  term: string;
  gpuindex: number;
  fts5: number;
  onlyGpuindex: number[];
  onlyFts5: number[];
}

export interface SanityResult {
  ok: boolean;
  termsChecked: number;
  postingsCompared: number;
  mismatches: SanityMismatch[];
  documents: number;
  tokens: number;
  notInIndex: number;
  ambiguousKeys: number;
  lengthMismatches: number;
  lengthExamples: { externalId: string; gpuindex: number; analysed: number }[];
  loadMs: number;
  queryMs: number;
  tokenizer: string;
}

export function sampleTerms(reader: IndexReader, count: number, seed?: number): string[];

export function retrievalSanity(o: {
  reader: IndexReader;
  documents: Iterable<SanityDocument> | AsyncIterable<SanityDocument>;
  terms?: number;
  termList?: string[];
  seed?: number;
  dbPath?: string;
}): Promise<SanityResult>;

export function formatSanity(r: SanityResult): string;
