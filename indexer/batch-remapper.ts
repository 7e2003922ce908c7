/**
 * Turns a worker's batch into global (termID, docID) pairs, in place: local term ids become
 * global TermIds (assigned on first sight, in crawl order) and document indexes become DocIds
 * (appended to the document table in crawl order).
 */
import type { TermDictionary } from './dictionary.js';
import type { DocumentTable } from './documents.js';
import type { ParsedBatch } from './parse-messages.js';

const UNMAPPED = 0xffffffff;

export class BatchRemapper {
  private readonly localTerms: string[][] = [];
  private readonly localToGlobal: Uint32Array[] = [];

  constructor(private readonly dictionary: TermDictionary, private readonly documents: DocumentTable) {}

  /**
   * Remaps batch b in place. `existingDocBase`: the batch's documents are already in the table
   * from that DocId on (a batch a resumed build takes over half-done), so they are not added again.
   */
  remap(worker: number, b: ParsedBatch, existingDocBase?: number): void {
    const terms = this.learn(worker, b);
    let map = this.localToGlobal[worker] ?? new Uint32Array(0);
    if (map.length < terms.length) {
      const grown = new Uint32Array(Math.max(terms.length, map.length * 2, 1024)).fill(UNMAPPED);
      grown.set(map);
      map = grown;
      this.localToGlobal[worker] = map;
    }
    const docBase = existingDocBase ?? (this.documents.nextDocId as number);
    if (existingDocBase === undefined) for (let i = 0; i < b.externalIds.length; i++) this.documents.add(b.externalIds[i]!, b.path, b.lengths[i]!);
    const pairs = b.pairs;
    const end = 2 * b.pairCount;
    for (let i = 0; i < end; i += 2) {
      const local = pairs[i]!;
      let g = map[local]!;
      if (g === UNMAPPED) {
        g = this.dictionary.idOf(terms[local]!);
        map[local] = g;
      }
      pairs[i] = g;
      pairs[i + 1] = docBase + pairs[i + 1]!;
    }
  }

  /**
   * Records the worker's new local terms of batch b without remapping it: for batches a resumed
   * build skips (their pairs are in completed runs), so that the worker's later batches map right.
   */
  learn(worker: number, b: ParsedBatch): string[] {
    const terms = (this.localTerms[worker] ??= []);
    if (b.firstNewTerm !== terms.length) throw new Error(`worker ${worker}: term ids out of sequence (${b.firstNewTerm} after ${terms.length})`);
    for (const t of b.newTerms) terms.push(t);
    return terms;
  }

  /** Terms in each worker's local dictionary (for the memory estimate: each worker holds its own). */
  localTermCounts(): number[] {
    return Array.from(this.localTerms, (t) => t?.length ?? 0);
  }
}
