import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { openIndex, type IndexReader } from '../src/reader.js';
import { openWriter } from '../src/writer.js';
import { bm25 } from '../src/query/cursor.js';
import { QueryError } from '../src/query/parse.js';
import { tokenStreams } from './helpers/positions.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-phrase-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let serial = 0;

/** Few words, stopwords among them (the, of, and), so phrases repeat and recur. */
const VOCABULARY = ['white', 'whale', 'the', 'of', 'sea', 'ahab', 'and', 'whales', 'ship'];
const word = fc.constantFrom(...VOCABULARY);
const words = (min: number, max: number) => fc.array(word, { minLength: min, maxLength: max }).map((w) => w.join(' '));
const doc = fc.record({ title: fc.oneof(fc.constant(''), words(1, 4)), text: words(0, 30) });
const crawl = fc.array(doc, { minLength: 1, maxLength: 30 });
const clause = fc.record({ text: words(1, 3), title: fc.boolean(), occur: fc.constantFrom('', '+', '-'), extra: fc.oneof(fc.constant(''), word) });
type Doc = { title: string; text: string };
type Clause = { text: string; title: boolean; occur: string; extra: string };

const K1 = 0.9;
const B = 0.4;

/** Whether `phrase` (analysed terms) lies in `tokens` at consecutive places. */
function contains(tokens: readonly string[], phrase: readonly string[]): boolean {
  for (let i = 0; i + phrase.length <= tokens.length; i++) if (phrase.every((t, j) => tokens[i + j] === t)) return true;
  return false;
}

/**
 * The query `occur[title:]"text" extra` scored by a scan of the documents' token streams: the
 * phrase's terms count where it occurs (in the title for title:, else in the title or the text,
 * never across them), `extra` wherever it occurs; tf, lengths and df from the index.
 */
function naiveSearch(reader: IndexReader, docs: readonly Doc[], c: Clause): Map<number, number> {
  const streams = tokenStreams(docs, {});
  const phrase = reader.analyze(c.text);
  const extra = c.extra ? reader.analyze(c.extra) : [];
  const n = reader.stats().documents;
  const avg = reader.stats().averageLength;
  const figures = (term: string) => {
    const { docIds, tfs } = reader.postingsOf(term);
    const tf = new Map<number, number>();
    docIds.forEach((d, i) => tf.set(d, tfs[i]!));
    const df = docIds.length;
    return { tf, idf: df > 0 ? Math.log(1 + (n - df + 0.5) / (df + 0.5)) : 0 };
  };
  const positional = phrase.length > 1 || (c.title && phrase.length > 0);
  const out = new Map<number, number>();
  docs.forEach((_, d) => {
    const s = streams[d]!;
    const length = reader.document(d)!.length;
    const occurs = positional ? contains(s.title, phrase) || (!c.title && contains(s.text, phrase)) : phrase.every((t) => figures(t).tf.has(d));
    if (c.occur === '+' && phrase.length > 0 && !occurs) return;
    if (c.occur === '-' && phrase.length > 0 && occurs) return;
    let score = 0;
    let counted = false;
    const slots = [...(c.occur === '-' ? [] : phrase.map((t) => ({ t, needs: positional }))), ...extra.map((t) => ({ t, needs: false }))];
    for (const { t, needs } of slots) {
      const f = figures(t);
      const tf = f.tf.get(d);
      if (tf === undefined || (needs && !occurs)) continue;
      score += bm25(f.idf, tf, length, K1, B, avg);
      counted = true;
    }
    if (counted) out.set(d, score);
  });
  return out;
}

function queryOf(c: Clause): string {
  return `${c.occur}${c.title ? 'title:' : ''}"${c.text}"${c.extra ? ` ${c.extra}` : ''}`;
}

describe('phrase and title: queries on a --positions index equal a scan of the token streams', () => {
  it('random crawls and clauses (required, excluded, title:, stopwords, repeated terms): pruned and exhaustive agree with the scan', async () => {
    await fc.assert(
      fc.asyncProperty(crawl, fc.array(clause, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 3 }), async (docs, clauses, titleWeight) => {
        const out = join(work, `idx-${serial++}`);
        await buildIndex({ input: docs.map((d, i) => ({ id: `d${i}`, ...d })), output: out, blockSize: 37, titleWeight, sorter: 'cpu', positions: true });
        const reader = openIndex(out);
        try {
          for (const c of clauses) {
            const query = queryOf(c);
            if (c.occur === '-' && !c.extra) {
              expect(() => reader.search(query)).toThrow(QueryError);
              continue;
            }
            const expected = naiveSearch(reader, docs, c);
            const k = docs.length + 1;
            const pruned = reader.search(query, { k, k1: K1, b: B });
            const exhaustive = reader.search(query, { k, k1: K1, b: B, exhaustive: true });
            expect(pruned.map((h) => [h.docId, h.score])).toEqual(exhaustive.map((h) => [h.docId, h.score]));
            expect(new Set(pruned.map((h) => h.docId))).toEqual(new Set(expected.keys()));
            for (const h of pruned) expect(h.score).toBeCloseTo(expected.get(h.docId)!, 12);
            // Top 3 by pruning: the best of the same scores.
            const top = reader.search(query, { k: 3, k1: K1, b: B });
            expect(top.map((h) => [h.docId, h.score])).toEqual(pruned.slice(0, 3).map((h) => [h.docId, h.score]));
          }
        } finally {
          reader.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('explains a phrase occurrence with its phrase, and leaves out those of phrases absent from the document', async () => {
    const out = join(work, `explain-${serial++}`);
    await buildIndex({ input: [{ id: 'a', title: 'The White Whale', text: 'the whale passed a white rock' }, { id: 'b', text: 'a white whale swims' }], output: out, sorter: 'cpu', positions: true });
    const reader = openIndex(out);
    try {
      const hits = reader.search('title:"white whale" swims', { explain: true });
      expect(hits.map((h) => h.externalId).sort()).toEqual(['a', 'b']);
      const hitA = hits.find((h) => h.externalId === 'a')!;
      const hitB = hits.find((h) => h.externalId === 'b')!;
      const a = hitA.explanation!;
      expect(a.map((c) => [c.term, c.phrase])).toEqual([
        ['white', 'title:"white whale"'],
        ['whale', 'title:"white whale"'],
      ]);
      expect(a.reduce((s, c) => s + c.score, 0)).toBe(hitA.score);
      expect(hitB.explanation!.map((c) => [c.term, c.phrase])).toEqual([['swim', undefined]]);
      // No phrase runs from the title ("white whale") into the text ("whale passed ..."), and
      // a stopword is no gap: "whale is white" would be the phrase "whale white".
      expect(reader.search('"whale whale"').length).toBe(0);
      expect(reader.search('"whale passed"').map((h) => h.externalId)).toEqual(['a']);
      expect(reader.search('"whale is passed"').map((h) => h.externalId)).toEqual(['a']);
      expect(reader.search('title:swims').length).toBe(0);
      expect(reader.search('title:passed').length).toBe(0);
    } finally {
      reader.close();
    }
  });

  it('a term of negative idf (deletes: df above the live count) in a phrase and outside it: pruning keeps the hit its absent phrase leaves', async () => {
    // N = 1 live, df(whale) = 2: idf < 0, every contribution of whale negative. In "b" the
    // phrase "whale ship" is absent, so whale counts once (outside the phrase), not twice: the
    // score is higher than twice the contribution, which pruning took as its bound.
    const out = join(work, `negative-${serial++}`);
    const writer = await openWriter(out, { stem: 'none', stopwords: 'none', sorter: 'cpu', refreshMs: 0, mergePolicy: false, positions: true });
    await writer.add([
      { id: 'a', text: 'whale ship' },
      { id: 'b', text: 'whale sea' },
    ]);
    await writer.delete(['a']);
    await writer.close();
    const reader = openIndex(out);
    try {
      for (const query of ['whale "whale ship"', '+whale "whale ship"', '"whale ship" whale sea', '"whale ship" whale']) {
        for (const k of [1, 2, 10]) {
          const exhaustive = reader.search(query, { k, exhaustive: true });
          expect(exhaustive.map((h) => h.externalId)).toContain('b');
          expect(reader.search(query, { k }).map((h) => [h.externalId, h.score])).toEqual(exhaustive.map((h) => [h.externalId, h.score]));
        }
      }
    } finally {
      reader.close();
    }
  });

  it('CLI: build --positions, then search a phrase with --explain; a phrase on an index without positions exits 2 with one line', () => {
    const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
    const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, GPUINDEX_DEBUG: '' } });
    const crawl = join(work, `cli-crawl-${serial++}`);
    mkdirSync(crawl);
    writeFileSync(join(crawl, 'a.jsonl'), [{ id: 'a', title: 'The White Whale', text: 'ahab' }, { id: 'b', text: 'a whale, white as snow' }].map((d) => JSON.stringify(d)).join('\n') + '\n');
    const withPositions = join(work, `cli-${serial++}`);
    const plain = join(work, `cli-${serial++}`);
    expect(run('build', crawl, '-o', withPositions, '--positions', '-q').status).toBe(0);
    expect(run('build', crawl, '-o', plain, '-q').status).toBe(0);
    const hit = run('search', withPositions, '"white whale"', '--explain');
    expect(hit.status).toBe(0);
    expect(hit.stdout).toMatch(/^ {2}1\. [0-9.]+ {2}a /);
    // b holds both words, not the phrase: one hit.
    expect(hit.stdout).not.toMatch(/^ {2}2\. /m);
    expect(hit.stdout).toMatch(/white: idf .*\[in "white whale"\]/);
    const refused = run('search', plain, '"white whale"');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe('gpuindex: query: the phrase "white whale" (column 1) needs an index built with --positions; this index has no positions\n');
  });

  it('an index without positions refuses phrases and title: in one line', async () => {
    const out = join(work, `plain-${serial++}`);
    await buildIndex({ input: [{ id: 'a', text: 'white whale' }], output: out, sorter: 'cpu' });
    const reader = openIndex(out);
    try {
      expect(() => reader.search('"white whale"')).toThrow(/needs an index built with --positions/);
      expect(() => reader.search('title:whale')).toThrow(/an index built with --positions answers title:/);
    } finally {
      reader.close();
    }
  });

  it('a --positions index answers title: only: other fields are refused in one line', async () => {
    const out = join(work, `fields-${serial++}`);
    await buildIndex({ input: [{ id: 'a', text: 'white whale' }], output: out, sorter: 'cpu', positions: true });
    const reader = openIndex(out);
    try {
      expect(() => reader.search('body:whale')).toThrow(/answers field queries for 'title:' only/);
    } finally {
      reader.close();
    }
  });
});
