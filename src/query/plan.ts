/**
 * A parsed query analysed the index's way (its tokenizer, stemmer and stopwords), as the terms
 * to evaluate: which are required, which excluded, and the scored occurrences in query order
 * (a term given twice counts twice, as it always has).
 *
 * Positional clauses (an index built with --positions): a phrase of several terms, and any
 * title: clause, become PlannedPhrases. Their terms are scored as other terms are, but a
 * document gets a phrase's occurrences only where the phrase occurs (src/query/phrases.ts); a
 * required phrase must occur, an excluded one must not. Stopwords are not indexed and not
 * counted in positions, so a phrase's stopwords drop out and its other terms must be adjacent:
 * "tale of two cities" matches the text "tale of two cities" and "tale two cities" alike.
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
  /** The positional clauses (see above). */
  phrases: PlannedPhrase[];
  /** Each slot's phrase (an index into `phrases`), or -1 for a term scored wherever it occurs. */
  slotPhrases: number[];
}

export interface PlannedPhrase {
  /** The phrase's terms in order, as indexes into QueryPlan.terms (a term may repeat). */
  terms: number[];
  /** 'title': the phrase must lie in the title; undefined: in the title or in the text. */
  field?: 'title';
  occur: Occur;
  /** The clause as written, for --explain. */
  text: string;
}

/** The fields a --positions index answers field:term for: its positions tell the title from the text. */
export const POSITIONAL_FIELDS: readonly string[] = ['title'];

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
  const plan: QueryPlan = { terms: [], slots: [], slotOccurs: [], phrases: [], slotPhrases: [] };
  const byTerm = new Map<string, number>();
  const termIndex = (term: string): number => {
    let t = byTerm.get(term);
    if (t === undefined) {
      byTerm.set(term, (t = plan.terms.length));
      plan.terms.push({ term, required: false, excluded: false });
    }
    return t;
  };
  for (const clause of parseQuery(query)) {
    if (clause.field !== undefined && !can.fields.includes(clause.field)) {
      const why = can.positions
        ? `this index answers field queries for ${can.fields.map((f) => `'${f}:'`).join(', ')} only`
        : `this index does not store fields separately (a document's title is folded into its text, each title term counted titleWeight times; an index built with --positions answers title:)`;
      throw new QueryError(`query: field '${clause.field}:' (column ${clause.column}): ${why}`);
    }
    const terms = analyze(clause.text);
    if (clause.kind === 'phrase' && terms.length > 1 && !can.positions)
      throw new QueryError(`query: the phrase "${clause.text}" (column ${clause.column}) needs an index built with --positions; this index has no positions`);
    const indexes = terms.map(termIndex);
    // A phrase of several terms is one positional clause; a field's unquoted text that analyses
    // to several terms (title:white-whale) is one for each, as such text is several terms elsewhere.
    const groups = clause.kind === 'phrase' && terms.length > 1 ? [indexes] : clause.field !== undefined ? indexes.map((t) => [t]) : [];
    const positional = groups.length > 0;
    const slotPhrase = new Map<number, number>();
    for (const group of groups) {
      slotPhrase.set(group[0]!, plan.phrases.length);
      const written = clause.kind === 'phrase' ? `"${clause.text}"` : group.length === indexes.length ? clause.text : plan.terms[group[0]!]!.term;
      plan.phrases.push({ terms: group, ...(clause.field === 'title' ? { field: 'title' as const } : {}), occur: clause.occur, text: `${clause.field !== undefined ? `${clause.field}:` : ''}${written}` });
    }
    for (const t of indexes) {
      const phrase = groups.length === 1 ? plan.phrases.length - 1 : (slotPhrase.get(t) ?? -1);
      const p = plan.terms[t]!;
      if (clause.occur === 'mustNot') {
        // An excluded phrase leaves out the documents it occurs in, not those of its terms.
        if (!positional) p.excluded = true;
      } else {
        if (clause.occur === 'must') p.required = true;
        plan.slots.push(t);
        plan.slotOccurs.push(clause.occur);
        plan.slotPhrases.push(phrase);
      }
    }
  }
  return plan;
}
