import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import type { InputDocument } from '../src/shared/options.js';
import { openIndex, type IndexReader } from '../src/reader.js';
import { formatSanity, retrievalSanity, sampleTerms } from '../bench/retrieval-sanity.mjs';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-fts5-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A small fixture with what tokenizers disagree on: stemming, stopwords, apostrophes, diacritics, CJK, scripts, digits. */
const docs: InputDocument[] = [
  { id: 'd1', title: 'The White Whale', text: "Call me Ishmael. The whale's jaw; whales and whaling — whaled!" },
  { id: 'd2', title: 'Café', text: 'A café is not a cafe; São Paulo, naïve résumé, Straße and STRASSE.' },
  { id: 'd3', title: '', text: '東京タワーと中文字符 and 한국어 텍스트, Ελληνικά κείμενα, русский текст, हिन्दी पाठ.' },
  { id: 'd4', title: 'Numbers', text: 'Version 3.11.2 of python3 in 2024; 1️⃣ keycap, x86_64, IPv6 ::1, 100% sure.' },
  { id: 'd5', title: 'Mail', text: "don't O'Brien rock’n’roll e-mail co-operate user@example.com https://example.com/a?b=c" },
  { id: 'd6', title: 'Empty-ish', text: 'the of and a to' },
  { id: 'd7', title: 'Repeated', text: 'whale whale whale harpoon harpoons harpooneer sea seas' },
  { id: 'd8', title: 'Marks', text: 'combining: e\u0301 cafe\u0301 n\u0303 zero\u200dwidth fi\ufb01 ﬁsh Ⅻ ½' },
];
for (let i = 0; i < 40; i++) docs.push({ id: `g${i}`, title: `Generated ${i}`, text: `word${i % 7} shared term${i % 3} whale ${i % 2 ? 'café' : 'cafe'} 日本${i}` });

const asDocuments = (list: InputDocument[]) => list.map((d) => ({ externalId: d.id, path: '', title: d.title ?? '', text: d.text }));

let reader: IndexReader;
beforeAll(async () => {
  const output = join(work, 'idx');
  await buildIndex({ input: docs, output, sorter: 'cpu', workers: 1 });
  reader = openIndex(output);
});
afterAll(() => reader?.close());

describe('retrieval sanity: gpuindex postings = FTS5 on gpuindex token streams', () => {
  it('agrees on every term of the lexicon', async () => {
    const all = [...reader.lexicon()].map((e) => e.term);
    expect(all.length).toBeGreaterThan(50);
    const r = await retrievalSanity({ reader, documents: asDocuments(docs), termList: all });
    expect(r.mismatches).toEqual([]);
    expect(r.notInIndex).toBe(0);
    expect(r.lengthMismatches).toBe(0);
    expect(r.documents).toBe(docs.length);
    expect(r.termsChecked).toBe(all.length);
    expect(r.ok).toBe(true);
    expect(formatSanity(r)).toMatch(/^PASS: /);
  });

  it('samples terms deterministically, frequent and rare', async () => {
    const a = sampleTerms(reader, 20, 5);
    expect(a).toEqual(sampleTerms(reader, 20, 5));
    expect(new Set(a).size).toBe(20);
    const r = await retrievalSanity({ reader, documents: asDocuments(docs), terms: 20, seed: 5 });
    expect(r.ok).toBe(true);
    expect(r.termsChecked).toBe(20);
  });

  it('notices when the documents are not what the index holds', async () => {
    const changed = asDocuments(docs).map((d) => (d.externalId === 'd7' ? { ...d, text: 'harpoon sea' } : d));
    const whale = reader.analyze('whale')[0]!;
    const r = await retrievalSanity({ reader, documents: changed, termList: [whale, reader.analyze('harpoon')[0]!] });
    expect(r.ok).toBe(false);
    expect(r.lengthMismatches).toBe(1);
    expect(r.mismatches.map((m: { term: string }) => m.term)).toEqual([whale]);
    expect(formatSanity(r)).toMatch(/^FAIL: .*1 term\(s\) differ/);
    const missing = await retrievalSanity({ reader, documents: [...asDocuments(docs), { externalId: 'zz', path: '', text: 'x' }], terms: 5 });
    expect(missing.notInIndex).toBe(1);
    expect(missing.ok).toBe(false);
  });
});
