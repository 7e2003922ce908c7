import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { exportCiff } from '../src/ciff/ciff.js';
import { openIndex } from '../src/reader.js';
import { readCiff } from './helpers/ciff-reader.js';
import { codePointOrder, naiveInvert } from './helpers/naive-inversion.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-inv-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let serial = 0;

/** Words that the tokenizer leaves alone with --stem none --stopwords none: lowercase letters and digits. */
const word = fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/);
const corpus = fc.array(fc.array(word, { minLength: 0, maxLength: 30 }), { minLength: 1, maxLength: 40 });

async function buildAndExport(docs: string[][], blockSize: number) {
  const out = join(work, `idx-${serial++}`);
  const summary = await buildIndex({
    input: docs.map((terms, i) => ({ id: `doc-${i}`, text: terms.join(' ') })),
    output: out,
    blockSize,
    sorter: 'cpu',
    stem: 'none',
    stopwords: 'none',
  });
  const reader = openIndex(out);
  const ciffPath = `${out}.ciff`;
  exportCiff(reader, ciffPath, 'test');
  return { summary, reader, ciff: readCiff(ciffPath) };
}

describe('the index equals a naive in-memory inversion', () => {
  it('on random corpora, with blocks small enough to force many runs, and with one block merged from memory (CIFF export read back)', async () => {
    await fc.assert(
      fc.asyncProperty(corpus, fc.oneof(fc.integer({ min: 1, max: 64 }), fc.constant(1 << 16)), async (docs, blockSize) => {
        const naive = naiveInvert(docs);
        const { summary, reader, ciff } = await buildAndExport(docs, blockSize);
        try {
          const pairs = docs.reduce((s, d) => s + d.length, 0);
          expect(summary.documents).toBe(docs.length);
          expect(summary.blocks).toBe(Math.ceil(pairs / blockSize));
          const expectedTerms = [...naive.postings.keys()].sort(codePointOrder);
          expect(ciff.lists.map((l) => l.term)).toEqual(expectedTerms);
          for (const l of ciff.lists) {
            const ref = naive.postings.get(l.term)!;
            expect(l.postings.map((p) => [p.docid, p.tf])).toEqual(ref);
            expect(l.df).toBe(ref.length);
            expect(l.cf).toBe(ref.reduce((s, [, tf]) => s + tf, 0));
          }
          expect(ciff.docs).toEqual(docs.map((d, i) => ({ docid: i, collectionDocid: `doc-${i}`, doclength: d.length })));
          expect(ciff.header.numDocs).toBe(docs.length);
          expect(ciff.header.totalTermsInCollection).toBe(pairs);
          // The reader's own lookups agree with the export.
          for (const [term, ref] of naive.postings) {
            const { docIds, tfs } = reader.postingsOf(term);
            expect(Array.from(docIds, (d, i) => [d, tfs[i]])).toEqual(ref);
          }
        } finally {
          reader.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('gives the same postings whatever the block size', async () => {
    const docs = Array.from({ length: 50 }, (_, i) => Array.from({ length: 20 + (i % 7) }, (_, j) => `w${(i * 7 + j * 13) % 37}`));
    const a = await buildAndExport(docs, 1);
    const b = await buildAndExport(docs, 1 << 20);
    a.reader.close();
    b.reader.close();
    expect(a.summary.blocks).toBe(docs.reduce((s, d) => s + d.length, 0));
    expect(b.summary.blocks).toBe(1);
    expect(a.ciff.lists).toEqual(b.ciff.lists);
  });
});
