/**
 * The title weight (BM25F folded at index time): a title term counts titleWeight times in its tf
 * and in the document's length. Checked against a naive BM25F scorer over the documents' fields,
 * against the same documents with the title written out titleWeight times in the text (the same
 * bytes), and through every parse path (API documents, JSONL with and without the fast path,
 * HTML <title>, 1 and 2 workers).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { openIndex } from '../src/reader.js';
import { openWriter } from '../src/writer.js';
import { exportCiff } from '../src/ciff/ciff.js';
import { readCiff } from './helpers/ciff-reader.js';
import { readIndexContent } from './helpers/index-files.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-fields-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(work, `i${n++}`);
const WORDS = ['whale', 'ship', 'sea', 'ahab', 'white', 'harpoon', 'deck', 'storm', 'oil', 'boat'];
const analysis = { stem: 'none', stopwords: 'none', sorter: 'cpu' } as const;
const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;

interface Doc {
  id: string;
  title: string;
  text: string;
}

const words = fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { maxLength: 12 });
const asText = (ws: number[]) => ws.map((w) => WORDS[w]).join(' ');

/** BM25F with one length normalization (Robertson, Zaragoza and Taylor), scored in the query's order, sorted by score then docID. */
function naiveBm25f(docs: Doc[], analyze: (t: string) => string[], w: number, query: string, k: number): { externalId: string; score: number }[] {
  const fields = docs.map((d) => ({ title: analyze(d.title), text: analyze(d.text) }));
  const lengths = fields.map((f) => w * f.title.length + f.text.length);
  const N = docs.length;
  const avg = lengths.reduce((a, l) => a + l, 0) / N || 1;
  const count = (ts: string[], t: string) => ts.filter((x) => x === t).length;
  const scores = new Map<number, number>();
  for (const term of analyze(query)) {
    const tfs = fields.map((f) => w * count(f.title, term) + count(f.text, term));
    const df = tfs.filter((tf) => tf > 0).length;
    if (df === 0) continue;
    const idf = Math.log(1 + (N - df + 0.5) / (df + 0.5));
    tfs.forEach((tf, d) => {
      if (tf > 0) scores.set(d, (scores.get(d) ?? 0) + (idf * tf * 1.9) / (tf + 0.9 * (1 - 0.4 + (0.4 * lengths[d]!) / avg)));
    });
  }
  return [...scores]
    .sort((x, y) => y[1] - x[1] || x[0] - y[0])
    .slice(0, k)
    .map(([d, score]) => ({ externalId: docs[d]!.id, score }));
}

describe('title weight', () => {
  it('ranks as a naive BM25F over title and text: the same hits, scores and order, pruned or exhaustive, and the same lengths', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(words, words), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 8 }),
        async (raw, titleWeight, queryWords, k) => {
          const docs = raw.map(([t, x], i) => ({ id: `d${i}`, title: asText(t), text: asText(x) }));
          const output = fresh();
          await buildIndex({ input: docs, output, ...analysis, titleWeight });
          const reader = openIndex(output);
          try {
            const analyze = (t: string) => reader.analyze(t);
            const query = asText(queryWords);
            const expected = naiveBm25f(docs, analyze, titleWeight, query, k);
            const hits = (exhaustive: boolean) => reader.search(query, { k, exhaustive }).map((h) => ({ externalId: h.externalId, score: h.score }));
            expect(hits(false)).toEqual(expected);
            expect(hits(true)).toEqual(expected);
            const lengths = docs.map((d) => titleWeight * analyze(d.title).length + analyze(d.text).length);
            docs.forEach((_, i) => expect(reader.document(i)!.length).toBe(lengths[i]));
            // CIFF carries the weighted tfs and lengths: an engine reading it scores as this index does.
            const ciffPath = `${output}.ciff`;
            exportCiff(reader, ciffPath, 'test');
            const ciff = readCiff(ciffPath);
            expect(ciff.docs.map((d) => d.doclength)).toEqual(lengths);
            for (const l of ciff.lists) {
              const tfs = docs.map((d) => titleWeight * analyze(d.title).filter((t) => t === l.term).length + analyze(d.text).filter((t) => t === l.term).length);
              expect(l.postings).toEqual(tfs.flatMap((tf, docid) => (tf > 0 ? [{ docid, tf }] : [])));
            }
          } finally {
            reader.close();
          }
        },
      ),
      { numRuns: 40, seed: 26 },
    );
  });

  it('a title counted w times is the index of the same text with the title written out w times before it (byte for byte)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(words, words), { minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 4 }), async (raw, titleWeight) => {
        const docs = raw.map(([t, x], i) => ({ id: `d${i}`, title: asText(t), text: asText(x) }));
        const weighted = fresh();
        await buildIndex({ input: docs, output: weighted, ...analysis, titleWeight });
        const written = fresh();
        const spelled = docs.map((d) => ({ id: d.id, text: `${d.title}\n`.repeat(d.title ? titleWeight : 0) + d.text }));
        await buildIndex({ input: spelled, output: written, ...analysis, titleWeight });
        const a = readIndexContent(weighted);
        const b = readIndexContent(written);
        expect(a.postings.equals(b.postings)).toBe(true);
        expect(a.terms).toEqual(b.terms);
        expect(a.docs).toEqual(b.docs);
        expect(a.stats).toEqual(b.stats);
      }),
      { numRuns: 25, seed: 7 },
    );
  });

  it('gives byte-identical indexes from JSONL (fast path and not), HTML titles, 1 and 2 workers, and API documents', async () => {
    const crawl = join(work, 'crawl');
    mkdirSync(crawl);
    let seed = 5;
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const text = (count: number) => Array.from({ length: count }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
    const docs: Doc[] = [];
    for (let f = 0; f < 4; f++) {
      const lines: string[] = [];
      for (let d = 0; d < 30; d++) {
        // Titles plain, escaped (\u), non-ASCII and absent: each way the fast path takes a piece.
        const title = d % 7 === 3 ? '' : d % 5 === 1 ? `Caf\u00e9 ${text(2)}` : text(1 + (d % 4));
        const doc = { id: `f${f}-d${d}`, title, text: text(5 + ((d * 7) % 30)) };
        docs.push(doc);
        lines.push(d % 6 === 2 ? JSON.stringify(doc).replace('"title":"', '"title":"\\u0057hale ') : JSON.stringify(doc));
        if (d % 6 === 2) doc.title = `Whale ${doc.title}`;
      }
      writeFileSync(join(crawl, `part-${f}.jsonl`), lines.join('\n') + '\n');
    }
    const build = async (workers: number, env: Record<string, string> = {}) => {
      const output = fresh();
      Object.assign(process.env, env);
      try {
        await buildIndex({ input: crawl, output, ...analysis, workers, pipeline: 'cpu', titleWeight: 3 });
      } finally {
        for (const k of Object.keys(env)) delete process.env[k];
      }
      return readIndexContent(output);
    };
    const one = await build(1);
    const two = await build(2);
    const slow = await build(2, { GPUINDEX_JSONL_FAST: '0' });
    const api = fresh();
    await buildIndex({ input: docs, output: api, ...analysis, titleWeight: 3 });
    const fromApi = readIndexContent(api);
    for (const c of [two, slow]) {
      expect(c.postings.equals(one.postings)).toBe(true);
      expect(c.terms).toEqual(one.terms);
      expect(c.docs).toEqual(one.docs);
    }
    expect(fromApi.postings.equals(one.postings)).toBe(true);
    expect(fromApi.terms).toEqual(one.terms);

    // HTML: the <title> is the title.
    const html = join(work, 'html');
    mkdirSync(html);
    writeFileSync(join(html, 'a.html'), '<html><head><title>White Whale</title></head><body><p>the ship and the sea</p></body></html>');
    const out = fresh();
    await buildIndex({ input: html, output: out, ...analysis, titleWeight: 3 });
    const reader = openIndex(out);
    try {
      expect(reader.document(0)!.length).toBe(3 * 2 + 5);
      expect([...reader.postingsOf('whale').tfs]).toEqual([3]);
      expect([...reader.postingsOf('ship').tfs]).toEqual([1]);
    } finally {
      reader.close();
    }
  });

  it('is saved with the analysis: 2 by default, absent at 1 (the settings of an index built before the option), and checked', async () => {
    const docs = [{ id: 'a', title: 'White Whale', text: 'the ship' }];
    const settingsOf = async (options: { titleWeight?: number }) => {
      const output = fresh();
      await buildIndex({ input: docs, output, ...analysis, ...options });
      const reader = openIndex(output);
      try {
        return { tokenizer: reader.settings.tokenizer, length: reader.document(0)!.length };
      } finally {
        reader.close();
      }
    };
    expect(await settingsOf({})).toEqual({ tokenizer: { stem: 'none', stopwords: 'none', cjk: 'unigram', titleWeight: 2 }, length: 2 * 2 + 2 });
    expect(await settingsOf({ titleWeight: 1 })).toEqual({ tokenizer: { stem: 'none', stopwords: 'none', cjk: 'unigram' }, length: 2 + 2 });
    for (const bad of [0, 65, 1.5, '2' as unknown as number]) {
      await expect(buildIndex({ input: docs, output: fresh(), ...analysis, titleWeight: bad })).rejects.toThrow(/^--title-weight must be an integer from 1 to 64, got /);
    }
    const r = spawnSync(process.execPath, [cli, 'build', join(work, 'crawl'), '-o', fresh(), '--title-weight', '0'], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('--title-weight must be an integer from 1 to 64, got 0');
  });

  it('the writer adds documents to an index with the weight it was built with (1 where its settings name none)', async () => {
    for (const titleWeight of [1, 4]) {
      const dir = fresh();
      await buildIndex({ input: [{ id: 'a', title: 'whale', text: 'ship' }], output: dir, ...analysis, titleWeight });
      const writer = await openWriter(dir, { ...analysis, refreshMs: 0 });
      try {
        await writer.add([{ id: 'b', title: 'white whale', text: 'the sea' }]);
        await writer.refresh();
        const reader = writer.reader();
        try {
          expect(reader.document(1)!.length).toBe(titleWeight * 2 + 2);
          expect([...reader.postingsOf('whale').tfs]).toEqual([titleWeight, titleWeight]);
        } finally {
          reader.close();
        }
      } finally {
        await writer.close();
      }
    }
  });
});
