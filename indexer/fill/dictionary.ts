/**
 * term -> TermId, assigned on first sight and global to the build. TermIds are dense
 * (0, 1, 2, ...) so the merge can keep per-term arrays indexed by id.
 */
import { asTermId, type TermId } from '../../src/shared/types.js';

export class TermDictionary {
  private readonly ids = new Map<string, TermId>();
  /** terms[id] is the term string of TermId id. */
  readonly terms: string[] = [];

  idOf(term: string): TermId {
    let id = this.ids.get(term);
    if (id === undefined) {
      id = asTermId(this.terms.length);
      this.ids.set(term, id);
      this.terms.push(term);
    }
    return id;
  }

  get size(): number {
    return this.terms.length;
  }
}
