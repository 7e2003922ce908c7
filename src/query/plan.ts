/**
 * A parsed query analysed the index's way (its tokenizer, stemmer and stopwords), as the terms
 * to evaluate: which are required, which excluded, and the scored occurrences in query order
 * (a term given twice counts twice, as it always has).
 */
import { parseQuery, QueryError, type Occur } from './parse.js';

export interface PlannedTerm {
  term: string;
  /** Some occurrence is required (+term, AND). */
  required: boolean;
  /** Some occurrence is excluded (-term): documents holding it are left out. */
  excluded: boolean;
}

export interface QueryPlan {
  /** The distinct analysed terms. */
  terms: PlannedTerm[];
  /** The scored occurrences in query order, as indexes into `terms`: a document's score is their contributions summed in this order. */
  slots: number[];
  /** The occurrence kind of each slot ('should' or 'must'). */
  slotOccurs: Exclude<Occur, 'mustNot'>[];
}

export interface IndexCapabilities {
  /** The index stores term positions (phrase queries). */
  positions: boolean;
  /** Fields the index stores separately (field:term queries). */
  fields: readonly string[];
}

/**
 * Each clause's text is analysed as documents are; text that analyses to several terms (e.g.
 * `white-whale`) gives each of them the clause's occurrence, and text that analyses to none (a
 * stopword) drops out. A quoted text of one term is that term.
 */
export function planQuery(query: string, analyze: (text: string) => string[], can: IndexCapabilities): QueryPlan {
  const plan: QueryPlan = { terms: [], slots: [], slotOccurs: [] };
  const byTerm = new Map<string, number>();
  for (const clause of parseQuery(query)) {
    if (clause.field !== undefined && !can.fields.includes(clause.field))
      throw new QueryError(`query: field '${clause.field}:' (column ${clause.column}): this index does not store fields separately (a document's title is folded into its text, each title term counted titleWeight times)`);
    const terms = analyze(clause.text);
    if (clause.kind === 'phrase' && terms.length > 1 && !can.positions)
      throw new QueryError(`query: the phrase "${clause.text}" (column ${clause.column}) needs an index built with --positions; this index has no positions`);
    for (const term of terms) {
      let t = byTerm.get(term);
      if (t === undefined) {
        byTerm.set(term, (t = plan.terms.length));
        plan.terms.push({ term, required: false, excluded: false });
      }
      const p = plan.terms[t]!;
      if (clause.occur === 'mustNot') p.excluded = true;
      else {
        if (clause.occur === 'must') p.required = true;
        plan.slots.push(t);
        plan.slotOccurs.push(clause.occur);
      }
    }
  }
  return plan;
}
