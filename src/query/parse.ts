/**
 * The query language, parsed (analysis and evaluation come after, src/query/plan.ts):
 *
 *   whale ship          either term (OR is the default; `OR` may be written)
 *   whale AND ship      both: AND makes the clauses on each side required
 *   +whale ship         whale required, ship optional (it adds to the score)
 *   whale -ship         documents holding ship are left out
 *   "white whale"       a phrase (needs an index with positions)
 *   title:whale         a term of one field; title:"white whale" a phrase of one
 *
 * There is no grouping: AND binds its two neighbours, whatever else the query holds. Anything
 * the grammar cannot read is a QueryError naming the column (1-based) and why, on one line.
 */
import { UserError } from '../shared/errors.js';

export type Occur = 'should' | 'must' | 'mustNot';

export interface QueryClause {
  occur: Occur;
  /** 'phrase' for quoted text. */
  kind: 'term' | 'phrase';
  /** The field named before a colon; undefined for the whole document. */
  field?: string;
  /** The clause's text, before analysis. */
  text: string;
  /** Where the clause starts in the query, 1-based. */
  column: number;
}

/** A query the index cannot answer as written: malformed, or asking for what the index lacks. One line. */
export class QueryError extends UserError {}

const FIELD = /^([A-Za-z_][A-Za-z0-9_]*):(?=["\p{L}\p{N}_])/u;

/**
 * Whether UTF-16 unit `c` is white space as `\s` matches it. Tested a character at a time
 * without a regular expression: a query's parse runs after other work has taken the CPU's
 * caches, where each regular expression's code is a fresh miss (a parse took 19 µs so, 1.6 µs warm).
 */
export function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** Where the run of non-space characters starting at `i` ends. */
function wordEnd(query: string, i: number): number {
  while (i < query.length && !isSpace(query.charCodeAt(i))) i++;
  return i;
}

export function parseQuery(query: string): QueryClause[] {
  const clauses: QueryClause[] = [];
  const fail = (column: number, why: string): never => {
    throw new QueryError(`query: ${why} (column ${column}): ${query}`);
  };
  /** Index in `clauses` of the clause before a pending AND, or -1. */
  let andLeft = -1;
  let andColumn = 0;
  let i = 0;
  const n = query.length;
  while (i < n) {
    const c = query[i]!;
    if (isSpace(query.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    // The keywords, standalone and upper case.
    const wordEndsAt = wordEnd(query, i);
    const word = query.slice(i, wordEndsAt);
    if (word === 'AND' || word === 'OR') {
      if (clauses.length === 0 || andLeft !== -1) fail(start + 1, `${word} needs a term before it`);
      andLeft = word === 'AND' ? clauses.length - 1 : -2; // an OR awaits its right side too
      andColumn = start + 1;
      i += word.length;
      continue;
    }
    if (c === '(' || c === ')') fail(start + 1, 'parentheses (grouping) are not supported');
    let occur: Occur = 'should';
    if (c === '+' || c === '-') {
      occur = c === '+' ? 'must' : 'mustNot';
      i++;
      if (i >= n || isSpace(query.charCodeAt(i))) fail(start + 1, `'${c}' must be followed by a term`);
      if (query[i] === '+' || query[i] === '-') fail(start + 1, `'${c}${query[i]}': one operator before a term`);
    }
    let field: string | undefined;
    // A field needs a colon before the word's end: most words have none, and no regular expression runs for them.
    const colon = query.indexOf(':', i);
    if (colon >= 0 && colon < wordEndsAt) {
      const f = FIELD.exec(query.slice(i));
      if (f) {
        field = f[1];
        i += f[0].length;
      } else {
        const bare = /^([A-Za-z_][A-Za-z0-9_]*):(\s|$)/.exec(query.slice(i));
        if (bare) fail(i + 1, `field '${bare[1]}:' has no term after it`);
        // title:-whale would otherwise be read as the text "title:-whale", whale optional.
        const inner = /^([A-Za-z_][A-Za-z0-9_]*):([+-])/.exec(query.slice(i));
        if (inner) fail(i + 1, `'${inner[2]}' goes before the field name, as in ${inner[2]}${inner[1]}:term`);
      }
    }
    let kind: QueryClause['kind'] = 'term';
    let text: string;
    if (query[i] === '"') {
      const close = query.indexOf('"', i + 1);
      if (close < 0) fail(i + 1, 'unterminated quote');
      kind = 'phrase';
      text = query.slice(i + 1, close);
      i = close + 1;
      if (i < n && !isSpace(query.charCodeAt(i))) fail(i + 1, 'a space must follow a closing quote');
    } else {
      let end = i;
      while (end < n && !isSpace(query.charCodeAt(end))) {
        if (query[end] === '"') fail(end + 1, 'a quote inside a term');
        if (query[end] === '(' || query[end] === ')') fail(end + 1, 'parentheses (grouping) are not supported');
        end++;
      }
      text = query.slice(i, end);
      i = end;
    }
    const clause: QueryClause = { occur, kind, text, column: start + 1, ...(field !== undefined ? { field } : {}) };
    if (andLeft >= 0) {
      const left = clauses[andLeft]!;
      if (left.occur === 'should') left.occur = 'must';
      if (clause.occur === 'should') clause.occur = 'must';
    }
    andLeft = -1;
    clauses.push(clause);
  }
  if (andLeft !== -1) fail(andColumn, 'AND or OR needs a term after it');
  if (clauses.length > 0 && clauses.every((c) => c.occur === 'mustNot')) fail(1, 'every term is excluded (-): nothing to match');
  return clauses;
}
