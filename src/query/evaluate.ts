/**
 * BM25 top-k over an index's segments, two ways that give the same hits, scores and order:
 *
 * - `prunedTopK`: document at a time with MaxScore (Turtle and Flood, "Query evaluation:
 *   strategies and optimizations") and block-max bounds (Ding and Suel, "Faster top-k document
 *   retrieval using block-max indexes"; PISA's block_max_maxscore). Terms are ordered by their
 *   bound; those whose bounds together cannot lift a document past the k-th score are
 *   non-essential and only looked up for documents the others bring. A block whose bound plus
 *   every other term's cannot reach the k-th score is skipped undecoded.
 * - `exhaustiveTopK`: term at a time over every posting, scores in a dense array.
 *
 * Both sum a document's contributions in the query's order (QueryPlan.slots), so their scores
 * agree to the bit. Segments are evaluated in order with one heap: docIDs grow across them.
 */
import type { Impacts } from '../../merge/impacts.js';
import { bm25, BlockCursor, END } from './cursor.js';
import type { QueryPlan } from './plan.js';
import { TopK } from './top-k.js';

export interface TermList {
  termId: number;
  df: number;
  /** The encoded list (merge/postings-codec.ts). */
  bytes: Uint8Array;
}

export interface SegmentInput {
  docBase: number;
  lengths: Uint32Array;
  deleted?: Uint8Array;
  impacts(): Impacts;
  /** The term's list in this segment, or undefined. */
  list(term: string): TermList | undefined;
  /** The term's list decoded. */
  decoded(term: string): { docIds: Uint32Array; tfs: Uint32Array } | undefined;
}

export interface Bm25Params {
  k1: number;
  b: number;
  /** Average document length. */
  avg: number;
  /** Each plan term's idf (index of QueryPlan.terms). */
  idf: Float64Array;
}

interface Scored {
  /** Index into plan.terms. */
  t: number;
  cursor: BlockCursor;
  /** Its count among the scored occurrences. */
  weight: number;
  bound: number;
  df: number;
}

/** Whether pruning's bounds hold: BM25 grows with tf and falls with length only for k1 >= 0 and 0 <= b <= 1. */
export function prunable(k1: number, b: number): boolean {
  return k1 >= 0 && b >= 0 && b <= 1 && Number.isFinite(k1);
}

export function prunedTopK(segments: readonly SegmentInput[], plan: QueryPlan, p: Bm25Params, k: number): [number, number][] {
  const heap = new TopK(k);
  const weights = new Uint32Array(plan.terms.length);
  for (const t of plan.slots) weights[t]!++;
  const contrib = new Float64Array(plan.terms.length);
  const seen = new Uint32Array(plan.terms.length);
  let stamp = 0;
  for (const seg of segments) {
    const scored: Scored[] = [];
    const excluded: BlockCursor[] = [];
    let missingRequired = false;
    for (let t = 0; t < plan.terms.length; t++) {
      const term = plan.terms[t]!;
      const list = seg.list(term.term);
      if (!list) {
        if (term.required) missingRequired = true;
        continue;
      }
      const idf = p.idf[t]!;
      const contribution = (tf: number, len: number) => bm25(idf, tf, len, p.k1, p.b, p.avg);
      if (term.excluded) excluded.push(new BlockCursor(list.bytes, list.df, seg.impacts(), list.termId, contribution, 0));
      if (weights[t]! > 0) {
        const cursor = new BlockCursor(list.bytes, list.df, seg.impacts(), list.termId, contribution, weights[t]!);
        scored.push({ t, cursor, weight: weights[t]!, bound: cursor.maxBound, df: list.df });
      }
    }
    if (missingRequired || scored.length === 0) continue;
    const { lengths, deleted, docBase } = seg;
    const isExcluded = (d: number): boolean => {
      for (const x of excluded) {
        x.nextGEQ(d);
        if (x.doc === d) return true;
      }
      return false;
    };
    /** The document's score in the plan's order, from the contributions recorded under `stamp`. */
    const canonical = (): number => {
      let s = 0;
      for (const t of plan.slots) if (seen[t] === stamp) s += contrib[t]!;
      return s;
    };
    const exact = (e: Scored, d: number): number => {
      const c = bm25(p.idf[e.t]!, e.cursor.tf(), lengths[d]!, p.k1, p.b, p.avg);
      contrib[e.t] = c;
      seen[e.t] = stamp;
      return e.weight * c;
    };
    const total = scored.reduce((a, e) => a + e.bound, 0);
    const required = scored.filter((e) => plan.terms[e.t]!.required);

    if (required.length === 0) {
      // MaxScore: bounds ascending; prefix[i] = the bounds of terms 0..i together.
      scored.sort((a, b) => a.bound - b.bound);
      const m = scored.length;
      const prefix = new Float64Array(m);
      let acc = 0;
      for (let i = 0; i < m; i++) prefix[i] = acc += scored[i]!.bound;
      let firstEssential = 0;
      for (;;) {
        const theta = heap.threshold;
        while (firstEssential < m && prefix[firstEssential]! <= theta) firstEssential++;
        if (firstEssential === m) break;
        let d = END;
        for (let i = firstEssential; i < m; i++) {
          const e = scored[i]!;
          const c = e.cursor;
          while (c.doc !== END && c.blockBound + (total - e.bound) <= theta) c.nextBlock();
          if (c.doc < d) d = c.doc;
        }
        if (d === END) break;
        let pass = !deleted?.[d];
        if (pass && theta > -Infinity) {
          let bound = 0;
          for (let i = firstEssential; i < m; i++) if (scored[i]!.cursor.doc === d) bound += scored[i]!.cursor.blockBound;
          for (let i = 0; i < firstEssential; i++) bound += scored[i]!.cursor.boundAt(d);
          pass = bound > theta;
        }
        if (pass && excluded.length > 0) pass = !isExcluded(d);
        if (pass) {
          stamp++;
          let bound = firstEssential > 0 ? prefix[firstEssential - 1]! : 0;
          for (let i = firstEssential; i < m; i++) if (scored[i]!.cursor.doc === d) bound += exact(scored[i]!, d);
          for (let i = firstEssential - 1; i >= 0 && bound > theta; i--) {
            const e = scored[i]!;
            bound -= e.bound;
            e.cursor.nextGEQ(d);
            if (e.cursor.doc === d) bound += exact(e, d);
          }
          if (bound > theta) {
            const score = canonical();
            if (score > theta) heap.push(docBase + d, score);
          }
        }
        for (let i = firstEssential; i < m; i++) if (scored[i]!.cursor.doc === d) scored[i]!.cursor.next();
      }
      continue;
    }

    // Required terms: their intersection brings the candidates (the rarest leads); the
    // optional terms, bounds descending, are looked up while they can still matter.
    const lead = required.reduce((a, e) => (e.df < a.df ? e : a));
    const others = required.filter((e) => e !== lead);
    const optional = scored.filter((e) => !plan.terms[e.t]!.required).sort((a, b) => b.bound - a.bound);
    const optionalBound = optional.reduce((a, e) => a + e.bound, 0);
    for (;;) {
      const theta = heap.threshold;
      const lc = lead.cursor;
      while (lc.doc !== END && lc.blockBound + (total - lead.bound) <= theta) lc.nextBlock();
      let d = lc.doc;
      if (d === END) break;
      let aligned = true;
      for (const e of others) {
        e.cursor.nextGEQ(d);
        if (e.cursor.doc !== d) {
          aligned = false;
          if (e.cursor.doc !== END) lc.nextGEQ(e.cursor.doc);
          else lc.nextGEQ(END);
          break;
        }
      }
      if (!aligned) continue;
      let pass = !deleted?.[d];
      if (pass && theta > -Infinity) {
        let bound = optionalBound;
        for (const e of required) bound += e.cursor.blockBound;
        pass = bound > theta;
      }
      if (pass && excluded.length > 0) pass = !isExcluded(d);
      if (pass) {
        stamp++;
        let bound = optionalBound;
        for (const e of required) bound += exact(e, d);
        for (let i = 0; i < optional.length && bound > theta; i++) {
          const e = optional[i]!;
          bound -= e.bound;
          e.cursor.nextGEQ(d);
          if (e.cursor.doc === d) bound += exact(e, d);
        }
        if (bound > theta) {
          const score = canonical();
          if (score > theta) heap.push(docBase + d, score);
        }
      }
      lc.next();
      d = lc.doc;
    }
  }
  return heap.sorted();
}

/**
 * Every posting of every term scored, term at a time in the plan's order, into a dense array
 * indexed by docID; documents then filtered by the required and excluded terms.
 */
export function exhaustiveTopK(segments: readonly SegmentInput[], plan: QueryPlan, p: Bm25Params, k: number, documents: number, scratch: ExhaustiveScratch): [number, number][] {
  const { scores, marks } = scratch.sized(documents);
  const touched: number[] = [];
  const requiredCount = plan.terms.filter((t) => t.required).length;
  const required = new Uint16Array(requiredCount > 0 ? documents : 0);
  const excluded = new Uint8Array(plan.terms.some((t) => t.excluded) ? documents : 0);
  const countedRequired = new Uint8Array(plan.terms.length);
  for (const seg of segments) {
    for (let t = 0; t < plan.terms.length; t++) {
      if (!plan.terms[t]!.excluded) continue;
      const list = seg.decoded(plan.terms[t]!.term);
      if (list) for (const d of list.docIds) excluded[seg.docBase + d] = 1;
    }
  }
  for (const t of plan.slots) {
    const term = plan.terms[t]!;
    const idf = p.idf[t]!;
    const countRequired = term.required && !countedRequired[t];
    countedRequired[t] = 1;
    for (const seg of segments) {
      const list = seg.decoded(term.term);
      if (!list) continue;
      const { docIds, tfs } = list;
      for (let i = 0; i < docIds.length; i++) {
        const local = docIds[i]!;
        if (seg.deleted?.[local]) continue;
        const d = seg.docBase + local;
        if (!marks[d]) {
          marks[d] = 1;
          touched.push(d);
        }
        scores[d] += bm25(idf, tfs[i]!, seg.lengths[local]!, p.k1, p.b, p.avg);
        if (countRequired) required[d]!++;
      }
    }
  }
  const heap = new TopK(k);
  for (const d of touched) {
    if ((requiredCount === 0 || required[d] === requiredCount) && !excluded[d]) heap.push(d, scores[d]!);
    scores[d] = 0;
    marks[d] = 0;
  }
  return heap.sorted();
}

/** The dense arrays of exhaustiveTopK, kept between queries (cleared after each). */
export class ExhaustiveScratch {
  private scores = new Float64Array(0);
  private marks = new Uint8Array(0);
  sized(documents: number): { scores: Float64Array; marks: Uint8Array } {
    if (this.scores.length < documents) {
      this.scores = new Float64Array(documents);
      this.marks = new Uint8Array(documents);
    }
    return { scores: this.scores, marks: this.marks };
  }
}
