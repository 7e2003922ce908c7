import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TopK } from '../src/query/top-k.js';

describe('top-k selection', () => {
  it('equals a full sort by score (higher first), then docID (lower first), cut at k', () => {
    fc.assert(
      fc.property(
        // Few distinct scores, so ties are common.
        fc.array(fc.tuple(fc.integer({ min: 0, max: 199 }), fc.integer({ min: 1, max: 6 })), { maxLength: 120 }),
        fc.integer({ min: 1, max: 30 }),
        (docs, k) => {
          const scores = new Float64Array(200);
          const touched: number[] = [];
          for (const [d, s] of docs) {
            if (scores[d] === 0) touched.push(d);
            scores[d] = s / 4;
          }
          const expected = touched
            .map((d) => [d, scores[d]!] as [number, number])
            .sort((x, y) => y[1] - x[1] || x[0] - y[0])
            .slice(0, k);
          const heap = new TopK(k);
          for (const d of touched) heap.push(d, scores[d]!);
          expect(heap.sorted()).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('search', () => {
  const WORDS = ['whale', 'ship', 'sea', 'ahab', 'white', 'harpoon', 'deck', 'storm', 'oil', 'boat'];

  it('ranks as an exhaustive BM25 over the documents\' token streams: the same hits, scores and order', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { buildIndex } = await import('../src/build.js');
    const { openIndex } = await import('../src/reader.js');
    const work = mkdtempSync(join(tmpdir(), 'gpuindex-search-'));
    let n = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { maxLength: 15 }), { minLength: 1, maxLength: 40 }),
          fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { minLength: 1, maxLength: 4 }),
          fc.integer({ min: 1, max: 12 }),
          async (docs, queryWords, k) => {
            const texts = docs.map((d) => d.map((w) => WORDS[w]).join(' '));
            const output = join(work, `i${n++}`);
            await buildIndex({ input: texts.map((text, i) => ({ id: `d${i}`, text })), output, stem: 'none', stopwords: 'none', sorter: 'cpu' });
            const reader = openIndex(output);
            try {
              const query = queryWords.map((w) => WORDS[w]).join(' ');
              // The reference: every document scored, term by term in query order, then sorted.
              const streams = texts.map((t) => reader.analyze(t));
              const N = streams.length;
              const avg = streams.reduce((a, s) => a + s.length, 0) / N || 1;
              const scores = new Map<number, number>();
              for (const term of reader.analyze(query)) {
                const df = streams.filter((s) => s.includes(term)).length;
                if (df === 0) continue;
                const idf = Math.log(1 + (N - df + 0.5) / (df + 0.5));
                streams.forEach((s, d) => {
                  const tf = s.filter((x) => x === term).length;
                  if (tf > 0) scores.set(d, (scores.get(d) ?? 0) + (idf * tf * 1.9) / (tf + 0.9 * (1 - 0.4 + (0.4 * s.length) / avg)));
                });
              }
              const expected = [...scores].sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, k).map(([d, score]) => ({ externalId: `d${d}`, score }));
              expect(reader.search(query, { k }).map((h) => ({ externalId: h.externalId, score: h.score }))).toEqual(expected);
            } finally {
              reader.close();
            }
          },
        ),
        { numRuns: 40 },
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
