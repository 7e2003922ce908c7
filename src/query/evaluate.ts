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
 *
 * Phrases (QueryPlan.phrases): a phrase's terms are evaluated as any others, their bounds
 * unchanged (a phrase only takes contributions away), and a document's exact score counts a
 * phrase's occurrences only where the phrase occurs (phraseScore): a phrase clause scores as the
 * sum of its terms' BM25 contributions in the documents it occurs in. A document no clause
 * matches, or failing a required or excluded phrase, scores -Infinity and is never kept.
 */
import type { TermImpacts } from '../../merge/impact-blocks.js';
import { blockBounds, bm25, bm25Normed, BlockCursor, END, lengthNorm, lengthNormTable, recycleBlockArrays, type BlockBounds } from './cursor.js';
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
  /** The blocks of termID `termId`'s list (merge/impacts.ts). */
  impacts(termId: number): TermImpacts;
  /** The term's list in this segment, or undefined. */
  list(term: string): TermList | undefined;
  /** The term's list decoded. */
  decoded(term: string): { docIds: Uint32Array; tfs: Uint32Array } | undefined;
  /**
   * A list's block bounds under these parameters: `compute()`'s, or those kept from an earlier
   * query with the same parameters (a segment's lists and impacts never change). Optional.
   */
  bounds?(termId: number, idf: number, weight: number, p: Bm25Params, compute: () => BlockBounds): BlockBounds;
  /** Where each of the plan's phrases occurs (1 a document, src/query/phrases.ts): with QueryPlan.phrases. */
  phrases?: readonly Uint8Array[];
  /** lengthNormTable(lengths, k1, b, avg), or the same kept from an earlier query. Optional. */
  norms?(k1: number, b: number, avg: number): Float64Array;
  /** `lengths` in 2 bytes a document, when every length fits (half the memory the scoring loops read at random). Optional. */
  shortLengths?(): Uint16Array | undefined;
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
  /**
   * What its contribution c in a document is multiplied by to bound its share of the score: its
   * count among the scored occurrences, or, where idf < 0 (every c negative), its count among
   * those outside phrases (a phrase's occurrences count only where the phrase occurs, so the
   * share lies between the two counts times c).
   */
  weight: number;
  bound: number;
  df: number;
  /** Its bound in the current window (the block covering the window). */
  wb: number;
}

/**
 * A document's score under the plan's phrases: `contribution(t)` each scored occurrence's term's
 * part (NaN: the document lacks the term), summed in the plan's order where the occurrence's
 * phrase occurs (matches[phrase][d]); -Infinity when none counts, or a required phrase is absent
 * or an excluded one present.
 */
export function phraseScore(plan: QueryPlan, matches: readonly Uint8Array[], d: number, contribution: (t: number) => number): number {
  for (let j = 0; j < plan.phrases.length; j++) {
    const occur = plan.phrases[j]!.occur;
    if ((occur === 'must' && !matches[j]![d]) || (occur === 'mustNot' && matches[j]![d])) return -Infinity;
  }
  let s = 0;
  let counted = false;
  for (let i = 0; i < plan.slots.length; i++) {
    const j = plan.slotPhrases[i]!;
    if (j >= 0 && !matches[j]![d]) continue;
    const c = contribution(plan.slots[i]!);
    if (Number.isNaN(c)) continue;
    s += c;
    counted = true;
  }
  return counted ? s : -Infinity;
}

/**
 * The documents of a segment that phraseScore can score above -Infinity, as far as its phrases
 * alone tell (1 a document), or undefined when they tell nothing: every required phrase occurs,
 * no excluded one does, and, where every scored occurrence belongs to a phrase, one of those
 * phrases occurs. prunedTopK skips the others before bounding them.
 */
export function phraseFilter(plan: QueryPlan, matches: readonly Uint8Array[], documents: number): Uint8Array | undefined {
  const onlyPhrases = plan.slotPhrases.every((j) => j >= 0);
  const screening = onlyPhrases || plan.phrases.some((ph) => ph.occur !== 'should');
  if (!screening) return undefined;
  const filter = new Uint8Array(documents);
  if (onlyPhrases) {
    for (const j of new Set(plan.slotPhrases)) {
      const m = matches[j]!;
      for (let d = 0; d < documents; d++) filter[d]! |= m[d]!;
    }
  } else filter.fill(1);
  plan.phrases.forEach((ph, j) => {
    const m = matches[j]!;
    if (ph.occur === 'must') for (let d = 0; d < documents; d++) filter[d]! &= m[d]!;
    else if (ph.occur === 'mustNot') for (let d = 0; d < documents; d++) filter[d]! &= m[d]! ^ 1;
  });
  return filter;
}

/** Whether pruning's bounds hold: BM25 grows with tf and falls with length only for k1 >= 0 and 0 <= b <= 1. */
export function prunable(k1: number, b: number): boolean {
  return k1 >= 0 && b >= 0 && b <= 1 && Number.isFinite(k1);
}

/** Blocks of each term (of the rarest required term, when some are required) scored first to find a starting threshold. */
const SEED_BLOCKS = 2;

/**
 * A little below x: a document scoring exactly the k-th seed's score may still rank in the top
 * k (by a lower docID), so pruning against a seed threshold must keep it.
 */
const justBelow = (x: number) => x - (Math.abs(x) * 1e-12 + 1e-300);

/** DocIDs a span of the term-at-a-time window evaluation covers: its per-document arrays' length. */
const SPAN = 1 << 14;
/** Essential terms a span evaluates at most (a bit each in a document's mask); more take the document-at-a-time loop. */
const MAX_SPAN_TERMS = 16;

/**
 * The span evaluation's arrays, made once: each document's mask of essential terms, their tfs,
 * and a bit a document touched (read in order, they give the documents in docID order without
 * a sort).
 */
class SpanScratch {
  readonly mask = new Uint32Array(SPAN);
  readonly tf = new Uint32Array(SPAN * MAX_SPAN_TERMS);
  readonly touched = new Int32Array(SPAN >>> 5);
  /** Per essential term of the window: its idf, count in the query, window bound, index into plan.terms; a document's contributions. */
  readonly idf = new Float64Array(MAX_SPAN_TERMS);
  readonly weight = new Float64Array(MAX_SPAN_TERMS);
  readonly wb = new Float64Array(MAX_SPAN_TERMS);
  readonly t = new Int32Array(MAX_SPAN_TERMS);
  readonly c = new Float64Array(MAX_SPAN_TERMS);
}

/**
 * Relative margin of the single-term loop's test without a division (a contribution that
 * certainly cannot lift its document past the threshold is not computed): far above the
 * rounding of either side, so the test never drops a document the exact score would keep.
 */
const SKIP_SLACK = 1e-9;

/** The contribution a posting of the one essential term needs to lift its document past theta (see SKIP_SLACK). */
const needFor = (theta: number, nonEssential: number, weight: number): number => (theta - nonEssential - SKIP_SLACK * (Math.abs(theta) + Math.abs(nonEssential))) / weight;
let spanScratch: SpanScratch | undefined;

export function prunedTopK(segments: readonly SegmentInput[], plan: QueryPlan, p: Bm25Params, k: number): [number, number][] {
  // The cursors of the last evaluation are gone: their block arrays serve this one's.
  recycleBlockArrays();
  const heap = new TopK(k);
  // Seeds: documents of the blocks with the highest bounds, each with its score or a lower
  // bound of it, before the pass in docID order. Their k-th is a floor for the final k-th
  // (they are real matches), so the pass starts pruning at once instead of after its first k
  // documents (Lucene and PISA raise the threshold the same way from the best blocks).
  let seeds = new TopK(k);
  let floor = -Infinity;
  const weights = new Uint32Array(plan.terms.length);
  for (const t of plan.slots) weights[t]!++;
  /** Each term's scored occurrences outside phrases: counted in every document holding the term. */
  const plainWeights = new Uint32Array(plan.terms.length);
  plan.slots.forEach((t, i) => {
    if (plan.slotPhrases[i] === -1) plainWeights[t]!++;
  });
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
      const im = seg.impacts(list.termId);
      const bounds = (weight: number): BlockBounds => {
        const compute = () => blockBounds(im, contribution, weight);
        return seg.bounds ? seg.bounds(list.termId, idf, weight, p, compute) : compute();
      };
      if (term.excluded) excluded.push(new BlockCursor(list.bytes, list.df, im, bounds(0)));
      if (weights[t]! > 0) {
        const cursor = new BlockCursor(list.bytes, list.df, im, bounds(weights[t]!));
        scored.push({ t, cursor, weight: idf < 0 ? plainWeights[t]! : weights[t]!, bound: cursor.maxBound, df: list.df, wb: 0 });
      }
    }
    if (missingRequired || scored.length === 0) continue;
    const total = scored.reduce((a, e) => a + e.bound, 0);
    // A segment whose terms' bounds together cannot pass the threshold that earlier segments
    // left holds no hit (its docIDs are higher, so a tie loses too): a live index's small
    // segments mostly end here, before their lengths, norms or phrase filter are touched.
    if (total <= Math.max(heap.threshold, floor)) continue;
    const { deleted, docBase } = seg;
    const lengths = seg.shortLengths?.() ?? seg.lengths;
    const { k1, b, avg } = p;
    const norms = seg.norms ? seg.norms(k1, b, avg) : lengthNormTable(lengths, k1, b, avg);
    /** lengthNorm of document d (from the table, the same doubles). */
    const normOf = (d: number): number => {
      const len = lengths[d]!;
      return len < norms.length ? norms[len]! : lengthNorm(len, k1, b, avg);
    };
    const isExcluded = (d: number): boolean => {
      for (const x of excluded) {
        x.nextGEQ(d);
        if (x.doc === d) return true;
      }
      return false;
    };
    const filter = plan.phrases.length > 0 && seg.phrases ? phraseFilter(plan, seg.phrases, lengths.length) : undefined;
    /** Documents left out before any bound: an excluded term's, or (phrases) one that cannot score. */
    const screened = excluded.length > 0 || filter !== undefined;
    const rejects = (d: number): boolean => (filter !== undefined && !filter[d]) || (excluded.length > 0 && isExcluded(d));
    const phrases = plan.phrases.length > 0 ? seg.phrases : undefined;
    if (plan.phrases.length > 0 && !phrases) throw new Error('a query with phrases needs each segment\'s phrase matches');
    const recorded = (t: number): number => (seen[t] === stamp ? contrib[t]! : NaN);
    /** The document's score in the plan's order, from the contributions recorded under `stamp`. */
    const canonical = (d: number): number => {
      if (phrases) return phraseScore(plan, phrases, d, recorded);
      let s = 0;
      for (const t of plan.slots) if (seen[t] === stamp) s += contrib[t]!;
      return s;
    };
    const exact = (e: Scored, d: number): number => {
      const c = bm25Normed(p.idf[e.t]!, e.cursor.tf(), normOf(d), k1);
      contrib[e.t] = c;
      seen[e.t] = stamp;
      return e.weight * c;
    };
    const required = scored.filter((e) => plan.terms[e.t]!.required);
    // Seeds only while the heap is not full: after the first segments the threshold is
    // already about the final one, and seeding each small segment scored its best blocks twice.
    if (heap.size < k) {
      if (required.length === 0 && !screened && !phrases && scored.every((e) => p.idf[e.t]! > 0)) {
        // A plain OR: a document scores at least what any one of its terms contributes (each is
        // positive where idf is: an index's deleted documents can make df exceed the live count,
        // and idf negative; adding a positive double never lowers a sum). A term's best-bounded
        // blocks hold distinct documents, so the k-th largest contribution there is a floor, found
        // with no lookup in the other lists: a document's length and its tf in the block.
        for (const e of scored) {
          const probe = e.cursor.fork();
          const idf = p.idf[e.t]!;
          const best = new TopK(k);
          for (const block of probe.topBlocks(SEED_BLOCKS)) {
            const ds = probe.blockDocs(block);
            const tfs = probe.blockTfs();
            for (let i = 0; i < ds.length; i++) {
              const d = ds[i]!;
              if (deleted?.[d]) continue;
              // normOf(d) written out: a double returned from a closure V8 does not inline here is a heap object.
              const len = lengths[d]!;
              best.push(docBase + d, bm25Normed(idf, tfs[i]!, len < norms.length ? norms[len]! : lengthNorm(len, k1, b, avg), k1));
            }
          }
          if (best.threshold > seeds.threshold) seeds = best;
        }
      } else {
        const from = required.length > 0 ? [required.reduce((a, e) => (e.df < a.df ? e : a))] : scored;
        // The blocks' docIDs in one typed array, sorted as numbers; a docID in several is scored once.
        const blocks: Uint32Array[] = [];
        let count = 0;
        for (const e of from) {
          const probe = e.cursor.fork();
          for (const b of probe.topBlocks(SEED_BLOCKS)) {
            const ds = probe.blockDocs(b);
            blocks.push(ds);
            count += ds.length;
          }
        }
        const docs = new Uint32Array(count);
        count = 0;
        for (const ds of blocks) {
          docs.set(ds, count);
          count += ds.length;
        }
        docs.sort();
        const probes = scored.map((e) => ({ ...e, cursor: e.cursor.fork() }));
        const probeExcluded = excluded.map((x) => x.fork());
        for (let i = 0; i < docs.length; i++) {
          const d = docs[i]!;
          if ((i > 0 && d === docs[i - 1]) || deleted?.[d]) continue;
          stamp++;
          let ok = true;
          for (const e of probes) {
            e.cursor.nextGEQ(d);
            if (e.cursor.doc === d) exact(e, d);
            else if (plan.terms[e.t]!.required) ok = false;
          }
          for (const x of probeExcluded) {
            x.nextGEQ(d);
            if (x.doc === d) ok = false;
          }
          const score = ok ? canonical(d) : -Infinity;
          if (score > -Infinity) seeds.push(docBase + d, score);
        }
      }
      floor = justBelow(seeds.threshold);
    }

    if (required.length === 0) {
      // MaxScore over windows (as Lucene's MaxScoreBulkScorer): a window runs from the
      // smallest docID left to the end of the rarest term's block there (rare terms' blocks
      // span the most docIDs), and each term's bound in it is the largest of its blocks that
      // overlap it. A window whose bounds together cannot pass the threshold is skipped
      // undecoded; otherwise terms are ordered by their window bounds, and those whose bounds
      // together cannot pass it alone are non-essential: looked up only for documents the
      // others bring.
      const m = scored.length;
      const order = scored.slice();
      let next = 0;
      // Window state complete() reads: theta (cut[0], the score a document must beat; it raises
      // it), the document's bound (cut[1]), and the terms before firstEssential. In a typed
      // array, not closure variables or arguments: a double V8 keeps in a closure's context, or
      // passes to a call it did not inline, is a new heap object at every write (about 200 KB a
      // query before, all of it garbage).
      const cut = new Float64Array(2);
      let firstEssential = 0;
      /**
       * Document d, bounded by cut[1] (its essential terms' contributions and the other terms'
       * window bounds): the non-essential terms' exact contributions replace their bounds while
       * it can still beat theta, and it is kept if its canonical score does.
       */
      const complete = (d: number): void => {
        const theta = cut[0]!;
        let bound = cut[1]!;
        for (let i = firstEssential - 1; i >= 0 && bound > theta; i--) {
          const e = order[i]!;
          bound -= e.wb;
          e.cursor.nextGEQ(d);
          if (e.cursor.doc === d) bound += exact(e, d);
        }
        if (bound > theta) {
          const score = canonical(d);
          if (score > theta) {
            heap.push(docBase + d, score);
            cut[0] = Math.max(heap.threshold, floor);
          }
        }
      };
      while (next < END) {
        let theta = (cut[0] = Math.max(heap.threshold, floor));
        let start = END;
        for (const e of scored) {
          const d = e.cursor.doc < next ? next : e.cursor.doc;
          if (d < start) start = d;
        }
        if (start === END) break;
        let end = END;
        let leadDf = Infinity;
        for (const e of scored) {
          if (e.cursor.shallowTo(start) && e.df < leadDf) {
            leadDf = e.df;
            end = e.cursor.shallowEnd;
          }
        }
        next = end + 1;
        let all = 0;
        for (const e of scored) {
          e.cursor.boundThrough(end);
          all += e.wb = e.cursor.through;
        }
        if (all <= theta) continue;
        // Window bounds ascending (a few terms: insertion sort).
        for (let i = 0; i < m; i++) order[i] = scored[i]!;
        for (let i = 1; i < m; i++) {
          const e = order[i]!;
          const v = e.wb;
          let j = i - 1;
          for (; j >= 0 && order[j]!.wb > v; j--) order[j + 1] = order[j]!;
          order[j + 1] = e;
        }
        firstEssential = 0;
        let nonEssential = 0;
        while (firstEssential < m && nonEssential + order[firstEssential]!.wb <= theta) nonEssential += order[firstEssential++]!.wb;
        for (let i = firstEssential; i < m; i++) order[i]!.cursor.nextGEQ(start);
        if (firstEssential === m - 1) {
          // One essential term (a query of one term, or one whose other terms' bounds together
          // are below the threshold: most windows once it has risen): its postings read
          // straight from the cursor's decoded blocks, each document bounded by its exact
          // contribution before any other term is looked up. The same documents are scored as
          // by the loop below, with no per-document search for the smallest docID.
          // A posting whose contribution is below `need` cannot lift its document past theta:
          // tested as numerator < need × denominator, without the division (SKIP_SLACK).
          const e = order[m - 1]!;
          const c = e.cursor;
          const idf = p.idf[e.t]!;
          const weight = e.weight;
          let need = needFor(theta, nonEssential, weight);
          let needTheta = theta;
          // With one other term, once this term's window bound alone cannot pass theta (theta
          // only rises), a document needs the other term too: one lacking it is passed over
          // with a step of the other's cursor, before its contribution is computed. (On the
          // 1 GB crawl, two words of about 10,000 documents each: 7,700 of 10,500 postings pass
          // `need`, and 330 documents hold both.)
          const other = m === 2 ? order[0]!.cursor : undefined;
          const ew = e.wb;
          let needsOther = other !== undefined && ew <= theta;
          // The loop's invariants in locals (complete() may move theta: it is read again only then).
          const reach = nonEssential + ew;
          const idfK1 = idf * (k1 + 1);
          const normsLength = norms.length;
          let live = reach > theta;
          while (live && c.doc <= end) {
            const docs = c.blockDocIds();
            const tfs = c.blockTfs();
            const n = c.blockCount;
            let i = c.position;
            for (; i < n; i++) {
              const d = docs[i]!;
              if (d > end) break;
              const tf = tfs[i]!;
              const len = lengths[d]!;
              const norm = len < normsLength ? norms[len]! : lengthNorm(len, k1, b, avg);
              if (idfK1 * tf < need * (tf + norm)) continue;
              if (needsOther) {
                other!.nextGEQ(d);
                if (other!.doc !== d) continue;
              }
              if (deleted?.[d] || (screened && rejects(d))) continue;
              const ce = bm25Normed(idf, tf, norm, k1);
              const bound = nonEssential + weight * ce;
              if (bound <= theta) continue;
              stamp++;
              contrib[e.t] = ce;
              seen[e.t] = stamp;
              cut[1] = bound;
              complete(d);
              theta = cut[0]!;
              if (theta !== needTheta) {
                need = needFor((needTheta = theta), nonEssential, weight);
                needsOther = other !== undefined && ew <= theta;
                if (reach <= theta) {
                  // Nothing left in the window can pass theta: the cursor stays after this posting.
                  live = false;
                  i++;
                  break;
                }
              }
            }
            if (i < n) {
              c.moveTo(i);
              break;
            }
            c.nextBlock();
          }
          continue;
        }
        if (m - firstEssential <= MAX_SPAN_TERMS) {
          // Several essential terms: the window in spans of SPAN docIDs, each term's postings in
          // a span added up term at a time into per-document arrays (tight loops over the
          // decoded blocks, no per-document search for the smallest docID), then the documents
          // they brought visited in docID order as the loop below visits them: bounded by their
          // essential contributions (summed in the same order), looked up in the non-essential
          // terms, scored in the query's order.
          // A document's length is read and normalized once, for all its terms; one whose terms'
          // window bounds cannot pass theta is not scored.
          const s = (spanScratch ??= new SpanScratch());
          const essentials = m - firstEssential;
          for (let k = 0; k < essentials; k++) {
            const e = order[firstEssential + k]!;
            s.idf[k] = p.idf[e.t]!;
            s.weight[k] = e.weight;
            s.wb[k] = e.wb;
            s.t[k] = e.t;
          }
          const { mask, touched } = s;
          const tfAt = s.tf;
          for (let from = start; from <= end; from += SPAN) {
            const to = Math.min(end, from + SPAN - 1);
            for (let k = 0; k < essentials; k++) {
              const c = order[firstEssential + k]!.cursor;
              const base = k * SPAN;
              const bit = 1 << k;
              c.nextGEQ(from);
              while (c.doc <= to) {
                const docs = c.blockDocIds();
                const tfs = c.blockTfs();
                const n = c.blockCount;
                let i = c.position;
                for (; i < n; i++) {
                  const d = docs[i]!;
                  if (d > to) break;
                  const off = d - from;
                  touched[off >>> 5] |= 1 << (off & 31);
                  mask[off] |= bit;
                  tfAt[base + off] = tfs[i]!;
                }
                if (i < n) {
                  c.moveTo(i);
                  break;
                }
                c.nextBlock();
              }
            }
            const words = ((to - from) >>> 5) + 1;
            for (let w = 0; w < words; w++) {
              let word = touched[w]!;
              if (word === 0) continue;
              touched[w] = 0;
              do {
                const low = word & -word;
                word ^= low;
                const off = (w << 5) + (31 - Math.clz32(low));
                const bits = mask[off]!;
                mask[off] = 0;
                const d = from + off;
                if (deleted?.[d]) continue;
                let bound = nonEssential;
                for (let k = 0; k < essentials; k++) if (bits & (1 << k)) bound += s.wb[k]!;
                if (bound <= theta) continue;
                const len = lengths[d]!;
                const norm = len < norms.length ? norms[len]! : lengthNorm(len, k1, b, avg);
                bound = nonEssential;
                for (let k = 0; k < essentials; k++) {
                  if (bits & (1 << k)) {
                    const ce = (s.c[k] = bm25Normed(s.idf[k]!, tfAt[k * SPAN + off]!, norm, k1));
                    bound += s.weight[k]! * ce;
                  }
                }
                if (bound <= theta || (screened && rejects(d))) continue;
                stamp++;
                for (let k = 0; k < essentials; k++) {
                  if (bits & (1 << k)) {
                    contrib[s.t[k]!] = s.c[k]!;
                    seen[s.t[k]!] = stamp;
                  }
                }
                cut[1] = bound;
                complete(d);
                theta = cut[0]!;
              } while (word !== 0);
            }
          }
          continue;
        }
        for (;;) {
          let d = END;
          for (let i = firstEssential; i < m; i++) if (order[i]!.cursor.doc < d) d = order[i]!.cursor.doc;
          if (d > end) break;
          let pass = !deleted?.[d];
          if (pass) {
            let bound = nonEssential;
            for (let i = firstEssential; i < m; i++) if (order[i]!.cursor.doc === d) bound += order[i]!.wb;
            pass = bound > theta;
          }
          if (pass && screened) pass = !rejects(d);
          if (pass) {
            stamp++;
            let bound = nonEssential;
            for (let i = firstEssential; i < m; i++) if (order[i]!.cursor.doc === d) bound += exact(order[i]!, d);
            cut[1] = bound;
            complete(d);
            theta = cut[0]!;
          }
          for (let i = firstEssential; i < m; i++) if (order[i]!.cursor.doc === d) order[i]!.cursor.next();
        }
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
      const theta = Math.max(heap.threshold, floor);
      const lc = lead.cursor;
      lc.skipBlocksUpTo(theta - (total - lead.bound));
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
      if (pass && screened) pass = !rejects(d);
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
          const score = canonical(d);
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
  if (plan.phrases.length > 0) return exhaustivePhrasesTopK(segments, plan, p, k);
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

/**
 * exhaustiveTopK for a plan with phrases: every scored term's contribution in every document of
 * its list, one dense column a term, then each document that holds one of them scored by
 * phraseScore (as prunedTopK scores it).
 */
function exhaustivePhrasesTopK(segments: readonly SegmentInput[], plan: QueryPlan, p: Bm25Params, k: number): [number, number][] {
  const heap = new TopK(k);
  for (const seg of segments) {
    const n = seg.lengths.length;
    const columns: Float64Array[] = plan.terms.map(() => new Float64Array(0));
    const excluded = new Uint8Array(n);
    const touched = new Uint8Array(n);
    for (let t = 0; t < plan.terms.length; t++) {
      const term = plan.terms[t]!;
      const list = seg.decoded(term.term);
      if (term.excluded && list) for (const d of list.docIds) excluded[d] = 1;
      if (!plan.slots.includes(t)) continue;
      const column = (columns[t] = new Float64Array(n).fill(NaN));
      if (!list) continue;
      for (let i = 0; i < list.docIds.length; i++) {
        const d = list.docIds[i]!;
        column[d] = bm25(p.idf[t]!, list.tfs[i]!, seg.lengths[d]!, p.k1, p.b, p.avg);
        touched[d] = 1;
      }
    }
    const required = plan.terms.map((term, t) => (term.required ? t : -1)).filter((t) => t >= 0);
    for (let d = 0; d < n; d++) {
      if (!touched[d] || excluded[d] || seg.deleted?.[d]) continue;
      if (required.some((t) => Number.isNaN(columns[t]![d]!))) continue;
      const score = phraseScore(plan, seg.phrases!, d, (t) => columns[t]![d]!);
      if (score > -Infinity) heap.push(seg.docBase + d, score);
    }
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
