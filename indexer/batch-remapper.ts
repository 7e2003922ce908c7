/**
 * Turns a worker's batch into global (termID, docID) pairs as it copies them into a block:
 * local term ids become global TermIds (assigned on first sight, in crawl order) and document
 * indexes become DocIds (appended to the document table in crawl order). Remapping while
 * copying reads and writes each pair once, where remapping in place and then copying took two
 * passes (no difference measurable on the H100 either way; docs/benchmarks.md).
 */
import type { TermDictionary } from './dictionary.js';
import type { DocumentTable } from './documents.js';
import type { ParsedBatch } from './parse-messages.js';

const UNMAPPED = 0xffffffff;

/** A batch being copied into blocks (BatchRemapper.begin). */
export interface RemapState {
  readonly pairs: Uint32Array;
  readonly terms: readonly string[];
  readonly map: Uint32Array;
  readonly docBase: number;
}

export class BatchRemapper {
  private readonly localTerms: string[][] = [];
  private readonly localToGlobal: Uint32Array[] = [];

  constructor(private readonly dictionary: TermDictionary, private readonly documents: DocumentTable) {}

  /**
   * Starts on batch b: learns its new terms and adds its documents to the table; copy() then
   * moves its pairs. `existingDocBase`: the batch's documents are already in the table from
   * that DocId on (a batch a resumed build takes over half-done), so they are not added again.
   */
  begin(worker: number, b: ParsedBatch, existingDocBase?: number): RemapState {
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
    return { pairs: b.pairs, terms, map, docBase };
  }

  /**
   * Writes pairs [from, from + count) of the batch begun as `state`, remapped, into `dest` from
   * pair index `at`. Pairs must be copied in order (a term's id is given at its first sight).
   */
  copy(state: RemapState, from: number, count: number, dest: Uint32Array, at: number): void {
    const { pairs, terms, map, docBase } = state;
    const end = 2 * (from + count);
    let o = 2 * at;
    for (let i = 2 * from; i < end; i += 2) {
      const local = pairs[i]!;
      let g = map[local]!;
      if (g === UNMAPPED) {
        g = this.dictionary.idOf(terms[local]!);
        map[local] = g;
      }
      dest[o++] = g;
      dest[o++] = docBase + pairs[i + 1]!;
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
