/**
 * Turns a worker's batch into global (termID, docID) pairs as it copies them into a block:
 * local term ids (a worker's raw tokens) become global TermIds (the raw token analysed here,
 * stemmed, its term numbered on first sight, in crawl order) and document indexes become DocIds
 * (appended to the document table in crawl order).
 *
 * The worker has already written the global id into every pair whose term this thread had
 * mapped when the worker built the batch (shared-term-ids.ts), so a copy is one memcpy and a
 * fix of the pairs the batch lists as unresolved; the batch's first DocId is recorded as the
 * block's document base for its pairs (the sorter adds it: on the GPU, a pass of its own). Where
 * looking every pair up and adding the base took 10-18 ns a pair on this thread, the memcpy
 * takes about 1 (this machine, a 16 Mi-pair block of 64 Ki-pair batches).
 */
import type { PairBlockBuilder } from './block.js';
import type { TermDictionary } from './dictionary.js';
import type { DocumentTable } from './documents.js';
import type { ParsedBatch } from '../parse/parse-messages.js';
import { RawTokenTerms, type TermAnalysis } from './raw-token-terms.js';
import { RawTokenList } from '../scan/raw-token-list.js';
import { UNRESOLVED_BIT, type SharedTermIds } from './shared-term-ids.js';
import { BigMap } from '../../runtime/big-map.js';

const LOCAL_ID = ~UNRESOLVED_BIT >>> 0;

/** Appends batch b's documents to the table (in crawl order: their DocIds follow); returns the first one's. */
export function addBatchDocuments(documents: DocumentTable, b: ParsedBatch): number {
  const base = documents.count;
  // A batch of small files (endSeq): each document is a file, its path its external id.
  for (let i = 0; i < b.externalIds.length; i++) documents.add(b.externalIds[i]!, b.endSeq !== undefined ? b.externalIds[i]! : b.path, b.lengths[i]!);
  if (b.titleLengths) for (let i = 0; i < b.externalIds.length; i++) documents.setTitleLength(base + i, b.titleLengths[i]!);
  if (b.warc) for (let i = 0; i < b.externalIds.length; i++) documents.setWarc(base + i, b.warc[2 * i]!, b.warc[2 * i + 1]!);
  return base;
}

/** A batch being copied into blocks (BatchRemapper.begin). */
export interface RemapState {
  readonly pairs: Uint32Array;
  readonly unresolved: Uint32Array;
  /** Next entry of `unresolved` to fix (copies go in order). */
  nextUnresolved: number;
  /** The worker's raw tokens, by local id. */
  readonly terms: RawTokenList;
  readonly termIds: SharedTermIds;
  readonly docBase: number;
  /** ParsedBatch.localIds: every pair is mapped here. */
  readonly localIds: boolean;
}

export class BatchRemapper {
  private readonly localTerms: RawTokenList[] = [];

  /**
   * `termIds[w]`: worker w's shared local -> global table (ParsePool.termIds); `tokenizer`
   * analyses the workers' raw tokens (it must be made from the workers' tokenizer options).
   */
  constructor(
    private readonly dictionary: TermDictionary,
    private readonly documents: DocumentTable,
    private readonly termIds: readonly SharedTermIds[],
    tokenizer: TermAnalysis,
  ) {
    this.cacheRawIds = termIds.length > 1;
    this.analysis = new RawTokenTerms(tokenizer);
  }

  /**
   * Raw token -> global TermId, shared by all workers: each worker sends every raw token it
   * meets, so with 15 workers the same token would otherwise be stemmed 15 times (the H100's
   * 2 GB crawl: parse alone 3.9 -> 4.2 s, medians of 6 rounds, without this cache).
   */
  private readonly rawIds = new BigMap<string, number>();
  /**
   * With one worker every raw token it sends is new (the worker numbers each once), so the
   * cache would only be missed and filled: 2 of the 4 Map operations a new token cost (mail:
   * 127 K raw tokens, about 50 ms of this thread).
   */
  private readonly cacheRawIds: boolean;

  private readonly analysis: RawTokenTerms;

  /**
   * The global TermId of raw token `local` of a worker's list (never a stopword: the worker
   * dropped those). A token of [a-z0-9] is stemmed from its bytes; only its term becomes a
   * string (and, with several workers, the token itself, for rawIds).
   */
  private termIdOf(tokens: RawTokenList, local: number): number {
    let raw: string | undefined;
    if (this.cacheRawIds) {
      raw = tokens.string(local);
      const id = this.rawIds.get(raw);
      if (id !== undefined) return id;
    }
    const id = this.dictionary.idOf(this.analysis.termOf(tokens, local, raw));
    if (raw !== undefined) this.rawIds.set(raw, id);
    return id;
  }

  /**
   * Starts on batch b: learns its new terms and adds its documents to the table; copy() then
   * moves its pairs. `existingDocBase`: the batch's documents are already in the table from
   * that DocId on (a batch a resumed build takes over half-done), so they are not added again.
   */
  begin(worker: number, b: ParsedBatch, existingDocBase?: number): RemapState {
    const terms = this.learn(worker, b);
    const docBase = existingDocBase ?? (this.documents.nextDocId as number);
    if (existingDocBase === undefined) addBatchDocuments(this.documents, b);
    return { pairs: b.pairs, unresolved: b.unresolved, nextUnresolved: 0, terms, termIds: this.termIds[worker]!, docBase, localIds: b.localIds === true };
  }

  /**
   * Writes pairs [from, from + count) of the batch begun as `state` into `block` from its
   * current count (which the caller then advances), term ids remapped, and records the batch's
   * document base. Pairs must be copied in order (a term's id is given at its first sight).
   */
  copy(state: RemapState, from: number, count: number, block: PairBlockBuilder): void {
    const { pairs, unresolved, termIds, docBase } = state;
    const at = block.count;
    const out = block.pairs.subarray(2 * at, 2 * (at + count));
    out.set(pairs.subarray(2 * from, 2 * (from + count)));
    block.docBases.add(at, docBase);
    if (state.localIds) return this.mapAll(state, out, count);
    const end = from + count;
    let k = state.nextUnresolved;
    for (; k < unresolved.length && unresolved[k]! < end; k++) {
      const i = unresolved[k]!;
      if (i < from) continue; // resumed mid-batch: pairs before `from` are in a completed run
      const local = pairs[2 * i]! & LOCAL_ID;
      let g = termIds.get(local);
      if (g < 0) g = this.mapFirstSight(state, local);
      out[2 * (i - from)] = g;
    }
    state.nextUnresolved = k;
  }

  /** The termID of each of the `count` pairs copied to `out`, all local ids (RemapState.localIds). */
  private mapAll(state: RemapState, out: Uint32Array, count: number): void {
    const { termIds } = state;
    for (let i = 0; i < 2 * count; i += 2) {
      const local = out[i]!;
      let g = termIds.get(local);
      if (g < 0) g = this.mapFirstSight(state, local);
      out[i] = g;
    }
  }

  /** A local id not mapped yet (its first sight in crawl order): its TermId, recorded for the next. */
  private mapFirstSight(state: RemapState, local: number): number {
    const g = this.termIdOf(state.terms, local);
    state.termIds.set(local, g);
    return g;
  }

  /**
   * Records the worker's new local terms of batch b without remapping it: for batches a resumed
   * build skips (their pairs are in completed runs), so that the worker's later batches map right.
   */
  learn(worker: number, b: ParsedBatch): RawTokenList {
    const terms = (this.localTerms[worker] ??= new RawTokenList());
    if (b.firstNewTerm !== terms.count) throw new Error(`worker ${worker}: term ids out of sequence (${b.firstNewTerm} after ${terms.count})`);
    terms.append(b.newTerms);
    return terms;
  }

  /** Terms in each worker's local dictionary (for the memory estimate: each worker holds its own). */
  localTermCounts(): number[] {
    return Array.from(this.localTerms, (t) => t?.count ?? 0);
  }
}
