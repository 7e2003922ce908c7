/**
 * term -> TermId, assigned on first sight and global to the build: the ids blocks are filled
 * with. The index numbers terms in code point order instead (merge/term-order.ts), so the
 * dictionary also keeps its terms in that order, updated each time a block is sealed
 * (lexKeys): a block is sorted by the ranks, and the merge maps ranks to final termIDs.
 */
import { asTermId, type TermId } from '../../src/shared/types.js';
import { compareTerms, sortTerms } from '../../merge/term-order.js';
import { StringIds } from '../../runtime/string-ids.js';

/** Fewest new terms sortAhead sorts, and the most terms it sorts ahead. */
const SORT_AHEAD_MIN = 4096;
const SORT_AHEAD_MAX = 1 << 20;

export class TermDictionary {
  /** terms[id] is the term string of TermId id. */
  readonly terms: string[] = [];
  private readonly ids = new StringIds(this.terms);
  /** The ids below `sortedCount`, in code point order of their terms. */
  private sorted = new Uint32Array(0);
  private sortedCount = 0;
  /** Some sorted term has a code unit at or above U+D800 (hasHighUnits). */
  private highUnits = false;

  idOf(term: string): TermId {
    if (this.unmapped) throw new Error('term dictionary: idOf after addNew');
    const id = this.ids.idOf(term);
    if (id === this.terms.length) this.terms.push(term);
    return asTermId(id);
  }

  /**
   * A term the caller knows is new (SharedInversion gives each shared term once), kept in
   * `terms` only: filling the map cost a build of 25 K terms ~7 ms. A dictionary filled this
   * way numbers its terms only so: idOf then throws.
   */
  addNew(term: string): TermId {
    this.unmapped = true;
    this.terms.push(term);
    return asTermId(this.terms.length - 1);
  }

  private unmapped = false;

  /**
   * Where the code point order of all the terms comes from instead of sorting them here: a
   * function that returns every TermId so far in that order (SharedInversion derives it from
   * the order of the terms it shares, sorted once for all builds).
   */
  orderFrom(order: () => Uint32Array<ArrayBuffer>): void {
    this.givenOrder = order;
  }

  private givenOrder?: () => Uint32Array<ArrayBuffer>;

  get size(): number {
    return this.terms.length;
  }

  /**
   * Every term's rank in code point order among the terms so far, indexed by TermId (a new
   * array: the caller may hand it to another thread while the dictionary grows). The order is
   * kept from one call to the next: only the terms added since are sorted, then placed by
   * galloping search, so a build sorts each term once.
   */
  lexKeys(): Uint32Array {
    this.extendOrder();
    const keys = new Uint32Array(this.sortedCount);
    const sorted = this.sorted;
    for (let p = 0; p < this.sortedCount; p++) keys[sorted[p]!] = p;
    return keys;
  }

  /** Every TermId in code point order of its term (the final termIDs' order). */
  order(): Uint32Array {
    this.extendOrder();
    return this.sorted.slice(0, this.sortedCount);
  }

  /**
   * Sorts the terms added since the last sort into the order now, when they are many enough
   * (a quarter of those sorted, at least SORT_AHEAD_MIN: each merge copies the whole order, so
   * geometric steps keep the total linear), for a thread that has time while it waits: the
   * order is then mostly ready when the parse ends (a crawl of one block needs it at once).
   * Only below SORT_AHEAD_MAX terms: a larger step would hold the thread up too long, and a
   * crawl of that many terms has several blocks, each sealed with the order anyway. Returns
   * false: there is nothing more to do until more terms come.
   */
  readonly sortAhead = (): boolean => {
    const n = this.terms.length;
    if (n <= SORT_AHEAD_MAX && n - this.sortedCount >= Math.max(SORT_AHEAD_MIN, this.sortedCount >> 2)) this.extendOrder();
    return false;
  };

  private extendOrder(): void {
    const n = this.terms.length;
    const from = this.sortedCount;
    if (n === from) return;
    if (this.givenOrder) {
      this.sorted = this.givenOrder();
      this.sortedCount = n;
      return;
    }
    if (this.unmapped) throw new Error('term dictionary: terms added by addNew need orderFrom');
    const terms = this.terms;
    const fresh = terms.slice(from);
    // Without a code unit at or above U+D800 in any term, code unit order (the engine's own
    // string comparison) is code point order.
    if (sortTerms(fresh)) this.highUnits = true;
    const high = this.highUnits;
    const merged = new Uint32Array(n);
    const old = this.sorted;
    let o = 0;
    let m = 0;
    for (const term of fresh) {
      // Old terms before this one, from where the last one went: galloping, then halving. A
      // step of the sort ahead brings a quarter as many terms as it has, so most land a few
      // old terms apart; a binary search over all that are left took 20 comparisons each.
      let lo = o;
      let step = 1;
      while (lo + step <= from && (high ? compareTerms(terms[old[lo + step - 1]!]!, term) < 0 : terms[old[lo + step - 1]!]! < term)) {
        lo += step;
        step *= 2;
      }
      let hi = Math.min(lo + step - 1, from);
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (high ? compareTerms(terms[old[mid]!]!, term) < 0 : terms[old[mid]!]! < term) lo = mid + 1;
        else hi = mid;
      }
      merged.set(old.subarray(o, lo), m);
      m += lo - o;
      o = lo;
      merged[m++] = this.ids.find(term);
    }
    merged.set(old.subarray(o, from), m);
    this.sorted = merged;
    this.sortedCount = n;
  }
}
