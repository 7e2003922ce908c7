/**
 * Which lexicon each run is keyed by, and how its keys and document numbers map to the index's
 * termIDs and docIDs. A build whose dictionary is one for the whole crawl has one lexicon (its
 * order) for every run. A build whose parse workers each keep their own dictionary and fill
 * their own blocks has one lexicon per worker: the worker's ids in code point order of their
 * terms, where each position lands among the union of all workers' terms (`finals`, from
 * mergeLexicons), and the docID of each document the worker numbered (`docIds`, in crawl order).
 * Both maps only ever increase, so a run sorted by (key, document number) stays sorted by
 * (termID, docID) once mapped, and the merge needs no sort.
 */
import { inSharedMemory } from '../runtime/worker-script.js';

/** One lexicon runs are keyed by. */
export interface RunLexicon {
  /** The lexicon's ids in code point order of their terms (TermDictionary.order). */
  order: Uint32Array;
  /** The final termID at each position of `order`; absent: the position is the termID. */
  finals?: Uint32Array;
  /** The docID of each of the lexicon owner's document numbers; absent: runs hold docIDs. */
  docIds?: Uint32Array;
}

export interface RunLexicons {
  lexicons: RunLexicon[];
  /** Run i is keyed by lexicons[owners[i]]; absent: every run by lexicons[0]. */
  owners?: readonly number[];
}

/** The lexicon of run `run`. */
export function lexiconOfRun(l: RunLexicons, run: number): RunLexicon {
  const owner = l.owners ? l.owners[run]! : 0;
  const lexicon = l.lexicons[owner];
  if (!lexicon) throw new Error(`run ${run} is keyed by lexicon ${owner}, which the build does not have`);
  return lexicon;
}

/** The same lexicons with every array in a SharedArrayBuffer: every merge thread reads them without a copy. */
export function sharedLexicons(l: RunLexicons): RunLexicons {
  return {
    lexicons: l.lexicons.map((x) => ({ order: inSharedMemory(x.order), ...(x.finals ? { finals: inSharedMemory(x.finals) } : {}), ...(x.docIds ? { docIds: inSharedMemory(x.docIds) } : {}) })),
    ...(l.owners ? { owners: [...l.owners] } : {}),
  };
}

/** The first position of `finals` (ascending) holding a termID >= `termId`; without finals, termId itself. */
export function positionOfTerm(finals: Uint32Array | undefined, termId: number): number {
  if (!finals) return termId;
  let lo = 0;
  let hi = finals.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (finals[mid]! < termId) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
