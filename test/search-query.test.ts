/**
 * The query language: every form parsed, every malformed form refused with its one line, the
 * analysis the index's own, and the CLI's exit code 2 and --explain.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSpace, parseQuery, QueryError, type QueryClause } from '../src/query/parse.js';
import { planQuery } from '../src/query/plan.js';
import { buildIndex } from '../src/build.js';
import { openIndex, type IndexReader } from '../src/reader.js';
import { UserError } from '../src/shared/errors.js';

const clause = (text: string, occur: QueryClause['occur'], column: number, extra: Partial<QueryClause> = {}): QueryClause => ({ occur, kind: 'term', text, column, ...extra });

describe('parseQuery', () => {
  it('reads every form', () => {
    expect(parseQuery('whale ship')).toEqual([clause('whale', 'should', 1), clause('ship', 'should', 7)]);
    expect(parseQuery('whale OR ship')).toEqual([clause('whale', 'should', 1), clause('ship', 'should', 10)]);
    expect(parseQuery('whale AND ship sea')).toEqual([clause('whale', 'must', 1), clause('ship', 'must', 11), clause('sea', 'should', 16)]);
    expect(parseQuery('a AND b AND c')).toEqual([clause('a', 'must', 1), clause('b', 'must', 7), clause('c', 'must', 13)]);
    expect(parseQuery('+whale -ship')).toEqual([clause('whale', 'must', 1), clause('ship', 'mustNot', 8)]);
    expect(parseQuery('whale AND -ship')).toEqual([clause('whale', 'must', 1), clause('ship', 'mustNot', 11)]);
    expect(parseQuery('"white whale"')).toEqual([clause('white whale', 'should', 1, { kind: 'phrase' })]);
    expect(parseQuery('-"white whale" ahab')).toEqual([clause('white whale', 'mustNot', 1, { kind: 'phrase' }), clause('ahab', 'should', 16)]);
    expect(parseQuery('title:whale')).toEqual([clause('whale', 'should', 1, { field: 'title' })]);
    expect(parseQuery('+title:"white whale"')).toEqual([clause('white whale', 'must', 1, { field: 'title', kind: 'phrase' })]);
    // A colon not followed by a word is no field: "http://x" is one term (analysed to http, x).
    expect(parseQuery('http://x')).toEqual([clause('http://x', 'should', 1)]);
    expect(parseQuery('  ')).toEqual([]);
    // Lower-case and/or are words, not operators.
    expect(parseQuery('rock and roll')).toEqual([clause('rock', 'should', 1), clause('and', 'should', 6), clause('roll', 'should', 10)]);
  });

  it('refuses each malformed form with one line naming the column', () => {
    const cases: [string, string][] = [
      ['"white whale', 'query: unterminated quote (column 1): "white whale'],
      ['whale AND', 'query: AND or OR needs a term after it (column 7): whale AND'],
      ['whale OR', 'query: AND or OR needs a term after it (column 7): whale OR'],
      ['AND whale', 'query: AND needs a term before it (column 1): AND whale'],
      ['whale AND AND ship', 'query: AND needs a term before it (column 11): whale AND AND ship'],
      ['whale OR AND ship', 'query: AND needs a term before it (column 10): whale OR AND ship'],
      ['+ whale', "query: '+' must be followed by a term (column 1): + whale"],
      ['whale -', "query: '-' must be followed by a term (column 7): whale -"],
      ['+-whale', "query: '+-': one operator before a term (column 1): +-whale"],
      ['title: whale', "query: field 'title:' has no term after it (column 1): title: whale"],
      ['ship title:-whale', "query: '-' goes before the field name, as in -title:term (column 6): ship title:-whale"],
      ['title:+"white whale"', `query: '+' goes before the field name, as in +title:term (column 1): title:+"white whale"`],
      ['(whale ship)', 'query: parentheses (grouping) are not supported (column 1): (whale ship)'],
      ['whale AND (ship)', 'query: parentheses (grouping) are not supported (column 11): whale AND (ship)'],
      ['whale"s', 'query: a quote inside a term (column 6): whale"s'],
      ['"white"whale', 'query: a space must follow a closing quote (column 8): "white"whale'],
      ['-whale -ship', 'query: every term is excluded (-): nothing to match (column 1): -whale -ship'],
    ];
    for (const [query, message] of cases) {
      let err: unknown;
      try {
        parseQuery(query);
      } catch (e) {
        err = e;
      }
      expect(err, query).toBeInstanceOf(QueryError);
      expect(err).toBeInstanceOf(UserError);
      expect((err as Error).message).toBe(message);
    }
  });

  it('gives back the clauses a well-formed query was written from', () => {
    const word = fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/).filter((w) => w !== 'and' && w !== 'or');
    const clauseArb = fc.record({
      occur: fc.constantFrom<QueryClause['occur']>('should', 'must', 'mustNot'),
      kind: fc.constantFrom<QueryClause['kind']>('term', 'phrase'),
      field: fc.option(fc.constantFrom('title', 'body_2'), { nil: undefined }),
      words: fc.array(word, { minLength: 1, maxLength: 3 }),
    });
    fc.assert(
      fc.property(fc.array(clauseArb, { minLength: 1, maxLength: 6 }), fc.array(fc.constantFrom(' ', '  ', '\t', '\n', '\u00a0', '\u3000 '), { minLength: 6, maxLength: 6 }), (clauses, gaps) => {
        if (clauses.every((c) => c.occur === 'mustNot')) clauses[0]!.occur = 'should';
        let query = '';
        const expected: QueryClause[] = [];
        clauses.forEach((c, i) => {
          if (i > 0) query += gaps[i]!;
          const text = c.kind === 'phrase' ? c.words.join(' ') : c.words[0]!;
          const column = query.length + 1;
          query += (c.occur === 'must' ? '+' : c.occur === 'mustNot' ? '-' : '') + (c.field ? `${c.field}:` : '') + (c.kind === 'phrase' ? `"${text}"` : text);
          expected.push({ occur: c.occur, kind: c.kind, text, column, ...(c.field ? { field: c.field } : {}) });
        });
        expect(parseQuery(query)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('tells white space as \\s does, for every UTF-16 unit', () => {
    for (let c = 0; c <= 0xffff; c++) expect(isSpace(c), c.toString(16)).toBe(/\s/.test(String.fromCharCode(c)));
  });

  it('on any text either parses or throws a QueryError of one line', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'b', ' ', '"', '+', '-', ':', '(', ')', 'A', 'N', 'D', 'O', 'R', 'AND', 'OR', 'x:') , maxLength: 20 }), (query) => {
        try {
          parseQuery(query);
        } catch (err) {
          expect(err).toBeInstanceOf(QueryError);
          expect((err as Error).message).not.toMatch(/\n/);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('planQuery', () => {
  const analyze = (text: string) => text.toLowerCase().split(/[^a-z]+/).filter((w) => w && w !== 'the');
  const can = { positions: false, fields: [] };

  it('analyses each clause; repeats count; excluded terms only filter; a one-term phrase is a term', () => {
    expect(planQuery('Whale +SHIP -sea whale "the ahab" white-oil', analyze, can)).toEqual({
      terms: [
        { term: 'whale', required: false, excluded: false },
        { term: 'ship', required: true, excluded: false },
        { term: 'sea', required: false, excluded: true },
        { term: 'ahab', required: false, excluded: false },
        { term: 'white', required: false, excluded: false },
        { term: 'oil', required: false, excluded: false },
      ],
      slots: [0, 1, 0, 3, 4, 5],
      slotOccurs: ['should', 'must', 'should', 'should', 'should', 'should'],
      phrases: [],
      slotPhrases: [-1, -1, -1, -1, -1, -1],
    });
    // A stopword alone drops out.
    expect(planQuery('the', analyze, can)).toEqual({ terms: [], slots: [], slotOccurs: [], phrases: [], slotPhrases: [] });
  });

  it('refuses a phrase without positions and a field without fields, in one line each', () => {
    expect(() => planQuery('ahab "white whale"', analyze, can)).toThrow(new QueryError('query: the phrase "white whale" (column 6) needs an index built with --positions; this index has no positions'));
    expect(() => planQuery('title:whale', analyze, can)).toThrow(
      new QueryError("query: field 'title:' (column 1): this index does not store fields separately (a document's title is folded into its text, each title term counted titleWeight times; an index built with --positions answers title:)"),
    );
    expect(planQuery('"white whale"', analyze, { positions: true, fields: [] }).slots).toEqual([0, 1]);
  });
});

describe('search with the query language', () => {
  const work = mkdtempSync(join(tmpdir(), 'gpuindex-query-'));
  const index = join(work, 'idx');
  const texts = ['the white whale', 'a white ship', 'whale oil and whale bone', 'ship and sea', 'the sea the sea the white sea'];
  let reader: IndexReader;
  beforeAll(async () => {
    await buildIndex({ input: texts.map((text, i) => ({ id: `d${i}`, text })), output: index, sorter: 'cpu' });
    reader = openIndex(index);
  });
  afterAll(() => {
    reader.close();
    rmSync(work, { recursive: true, force: true });
  });
  const ids = (q: string) => reader.search(q, { k: 10 }).map((h) => h.externalId);

  it('matches each form', () => {
    expect(ids('whale').sort()).toEqual(['d0', 'd2']);
    expect(ids('whale ship').sort()).toEqual(['d0', 'd1', 'd2', 'd3']);
    expect(ids('white AND sea')).toEqual(['d4']);
    expect(ids('+white whale').sort()).toEqual(['d0', 'd1', 'd4']);
    expect(ids('white -whale').sort()).toEqual(['d1', 'd4']);
    expect(ids('Whales')).toEqual(ids('whale')); // analysed: Porter stems, lower case
    expect(ids('the')).toEqual([]); // a stopword only
    expect(ids('"whale"').sort()).toEqual(['d0', 'd2']);
    expect(() => reader.search('"white whale"')).toThrow(/needs an index built with --positions/);
  });

  it('explains each hit: every scored term, its BM25 parts, summing to the score', () => {
    const [hit] = reader.search('whale white', { k: 1, explain: true });
    expect(hit!.externalId).toBe('d0');
    const parts = hit!.explanation!;
    expect(parts.map((c) => [c.term, c.tf, c.length, c.occur])).toEqual([
      ['whale', 1, 2, 'should'],
      ['white', 1, 2, 'should'],
    ]);
    const stats = reader.stats();
    for (const c of parts) {
      expect(c.df).toBe(2 + Number(c.term === 'white'));
      expect(c.idf).toBe(Math.log(1 + (stats.documents - c.df + 0.5) / (c.df + 0.5)));
      expect(c.averageLength).toBe(stats.averageLength);
      expect(c.score).toBe((c.idf * c.tf * (0.9 + 1)) / (c.tf + 0.9 * (1 - 0.4 + (0.4 * c.length) / c.averageLength)));
    }
    expect(parts[0]!.score + parts[1]!.score).toBe(hit!.score);
  });

  it('CLI: a malformed query prints one line and exits 2; --explain prints the parts', () => {
    const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
    const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, GPUINDEX_DEBUG: '' } });
    const bad = run('search', index, 'whale AND');
    expect(bad.status).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe('gpuindex: query: AND or OR needs a term after it (column 7): whale AND\n');
    const phrase = run('search', index, '"white whale"');
    expect(phrase.status).toBe(2);
    expect(phrase.stderr).toBe('gpuindex: query: the phrase "white whale" (column 1) needs an index built with --positions; this index has no positions\n');
    const explained = run('search', index, '+white whale', '-k', '1', '--explain');
    expect(explained.status).toBe(0);
    expect(explained.stdout).toMatch(/^ {2}1\. [\d.]+ {2}d0\n/);
    expect(explained.stdout).toMatch(/\n {5}[\d.]+ {2}\+white: idf [\d.]+ \(df 3\) \* tf 1 \* \(k1 \+ 1\) \/ \(tf \+ k1 \* \(1 - b \+ b \* length 2 \/ average [\d.]+\)\)\n/);
    expect(explained.stdout).toMatch(/\n {5}[\d.]+ {2}whale: idf [\d.]+ \(df 2\) \*/);
    const json = JSON.parse(run('search', index, 'whale', '--json', '--explain').stdout);
    expect(json[0].explanation[0].term).toBe('whale');
  });
});
