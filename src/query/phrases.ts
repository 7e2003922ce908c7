/**
 * Where a positional clause (QueryPlan.phrases) occurs in one segment: the documents holding
 * all its terms (the shortest list leads, the others follow it), then their positions checked
 * (positions.bin, merge/positions-file.ts). A phrase t0 t1 … occurs at p when each ti is at
 * p + i; a title: phrase when it also ends before the title's length (a title's positions are
 * 0 .. L−1 and the text's start at L + 1, so no occurrence spans the two).
 */
import type { PositionsCursor } from '../../merge/positions-file.js';
import type { PlannedPhrase } from './plan.js';

/** What the check reads of a segment. */
export interface PhraseSource {
  documents: number;
  /** The term's list decoded, or undefined when the segment lacks it. */
  decoded(term: string): { docIds: Uint32Array; tfs: Uint32Array } | undefined;
  /** A cursor over the term's positions, beside its decoded list. */
  positions(term: string, list: { docIds: Uint32Array; tfs: Uint32Array }): PositionsCursor;
  titleLengths: Uint32Array;
}

/** 1 for each of the segment's documents the phrase occurs in. */
export function phraseMatches(phrase: PlannedPhrase, terms: readonly string[], source: PhraseSource): Uint8Array {
  const out = new Uint8Array(source.documents);
  const distinct = [...new Set(phrase.terms)];
  const lists = distinct.map((t) => source.decoded(terms[t]!));
  if (lists.some((l) => l === undefined || l.docIds.length === 0)) return out;
  const docIds = lists.map((l) => l!.docIds);
  const cursors = distinct.map((t, k) => source.positions(terms[t]!, lists[k]!));
  /** Phrase position i -> its term's place in `distinct`. */
  const slot = phrase.terms.map((t) => distinct.indexOf(t));
  const lead = docIds.reduce((best, l, k) => (l.length < docIds[best]!.length ? k : best), 0);
  const at = new Int32Array(distinct.length);
  const positions: Uint32Array[] = new Array(distinct.length);
  const title = phrase.field === 'title';
  outer: for (const d of docIds[lead]!) {
    for (let k = 0; k < distinct.length; k++) {
      const l = docIds[k]!;
      let i = at[k]!;
      while (i < l.length && l[i]! < d) i++;
      at[k] = i;
      if (i === l.length) break outer;
      if (l[i] !== d) continue outer;
    }
    for (let k = 0; k < distinct.length; k++) positions[k] = cursors[k]!.positionsOf(at[k]!);
    const limit = title ? source.titleLengths[d]! : Infinity;
    if (occurs(positions, slot, limit)) out[d] = 1;
  }
  return out;
}

/** Whether some p has positions[slot[i]] holding p + i for every i, with p + n − 1 < limit. */
function occurs(positions: readonly Uint32Array[], slot: readonly number[], limit: number): boolean {
  const n = slot.length;
  const first = positions[slot[0]!]!;
  /** Per phrase position, where its search stands (the starts only grow with p). */
  const from = new Int32Array(n);
  for (const p of first) {
    if (p + n - 1 >= limit) return false;
    let all = true;
    for (let i = 1; i < n && all; i++) {
      const list = positions[slot[i]!]!;
      let j = from[i]!;
      while (j < list.length && list[j]! < p + i) j++;
      from[i] = j;
      all = j < list.length && list[j] === p + i;
    }
    if (all) return true;
  }
  return false;
}
