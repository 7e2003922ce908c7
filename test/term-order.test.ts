/**
 * Term order: termIDs are ranks in code point order, kept incrementally by the dictionary and
 * mapped from run keys by KeyWalk; so a build, and any merge of segments with documents deleted,
 * number the same terms the same way (byte-identical indexes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { compareTerms, KeyWalk, keysBefore, sortTerms, termOrderOf } from '../merge/term-order.js';
import { TermDictionary } from '../indexer/fill/dictionary.js';
import { buildIndex } from '../src/build.js';
import { openWriter } from '../src/writer.js';
import { optimizeIndex } from '../src/optimize.js';
import { verifyIndex } from '../merge/verify.js';
import { readIndexContent } from './helpers/index-files.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-term-order-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => join(dir, `${name}-${n++}`);

const byUtf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
/** Strings of any code points, astral ones included, and the units around U+D800..U+FFFF. */
const termArb = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 5 }), fc.string({ unit: fc.constantFrom('a', 'é', '\ud7ff', '\ue000', '\uffff', '😀', '𝔘', '中'), maxLength: 5 }));

describe('code point order', () => {
  it('compareTerms and sortTerms order strings as their UTF-8 bytes do', () => {
    fc.assert(
      fc.property(fc.array(termArb, { maxLength: 40 }), (terms) => {
        for (let i = 1; i < terms.length; i++) expect(Math.sign(compareTerms(terms[i - 1]!, terms[i]!))).toBe(Math.sign(byUtf8(terms[i - 1]!, terms[i]!)));
        const sorted = [...terms];
        sortTerms(sorted);
        expect(sorted).toEqual([...terms].sort(byUtf8));
      }),
      { numRuns: 300 },
    );
  });

  it('the dictionary keeps its terms in that order as it grows: every lexKeys() ranks the terms so far', () => {
    fc.assert(
      fc.property(fc.array(fc.array(termArb, { maxLength: 12 }), { maxLength: 8 }), (batches) => {
        const dictionary = new TermDictionary();
        for (const batch of batches) {
          for (const t of batch) dictionary.idOf(t);
          const keys = dictionary.lexKeys();
          const expected = [...dictionary.terms].sort(byUtf8);
          expect(keys.length).toBe(dictionary.size);
          for (let id = 0; id < keys.length; id++) expect(expected[keys[id]!]).toBe(dictionary.terms[id]);
          expect(Array.from(dictionary.order(), (id) => dictionary.terms[id])).toEqual(expected);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('KeyWalk maps the keys of a run sealed at any dictionary size to final termIDs, from any start', () => {
    fc.assert(
      fc.property(fc.uniqueArray(termArb, { minLength: 1, maxLength: 30 }), fc.nat(), fc.nat(), (terms, a, b) => {
        const order = termOrderOf(terms);
        const keySpace = 1 + (a % terms.length);
        // The reference: ranks among the first keySpace terms, and their final positions.
        const prefix = terms.slice(0, keySpace).sort(byUtf8);
        const finalOf = (key: number) => Array.from(order).findIndex((id) => terms[id] === prefix[key]);
        const start = b % (terms.length + 1);
        const [startKey] = keysBefore(order, keySpace, [start]);
        expect(startKey).toBe(prefix.filter((t) => Array.from(order).findIndex((id) => terms[id] === t) < start).length);
        const walk = new KeyWalk(order, keySpace, start, startKey);
        for (let key = startKey!; key < keySpace; key++) expect(walk.toFinal(key)).toBe(finalOf(key));
      }),
      { numRuns: 300 },
    );
  });
});

describe('merges number terms as one build does', () => {
  const WORDS = ['whale', 'Whale', 'sea', 'ship', 'moby', 'ahab', 'émile', 'naïve', '鯨', '海', 'storm', 'oil', 'crew', 'deck'];
  const docArb = fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { minLength: 1, maxLength: 8 });
  const analysis = { tokenizer: { stem: 'none' as const, stopwords: 'none' as const } };

  it('build of A+B+C, A built then B and C added and optimized, and after deletes a build of the survivors: byte-identical', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(docArb, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 3 }), fc.array(fc.nat(), { maxLength: 4 }), async (parts, picks) => {
        let next = 0;
        const batches = parts.map((p) => p.map((words) => ({ id: `d${next++}`, text: words.map((w) => WORDS[w]).join(' ') })));
        const all = batches.flat();
        const whole = fresh('whole');
        await buildIndex({ input: all, output: whole, ...analysis });

        const live = fresh('live');
        await buildIndex({ input: batches[0]!, output: live, ...analysis });
        const writer = await openWriter(live, { ...analysis, refreshMs: 0 });
        for (const b of batches.slice(1)) {
          await writer.add(b);
          await writer.commit();
        }
        await writer.close();
        optimizeIndex(live);
        verifyIndex(live);
        const a = readIndexContent(whole);
        const b = readIndexContent(live);
        expect(b.postings).toEqual(a.postings);
        expect(b.terms).toEqual(a.terms);
        expect(b.docs).toEqual(a.docs);

        // Deletes: optimized, the index is the build of the survivors, terms of no survivor dropped.
        const gone = new Set(picks.map((p) => all[p % all.length]!.id));
        if (gone.size === all.length) gone.delete(all[0]!.id);
        const deleting = await openWriter(live, { ...analysis, refreshMs: 0 });
        await deleting.delete([...gone]);
        await deleting.close();
        optimizeIndex(live);
        verifyIndex(live);
        const survivors = fresh('survivors');
        await buildIndex({ input: all.filter((d) => !gone.has(d.id)), output: survivors, ...analysis });
        const s = readIndexContent(survivors);
        const o = readIndexContent(live);
        expect(o.postings).toEqual(s.postings);
        expect(o.terms).toEqual(s.terms);
        expect(o.docs).toEqual(s.docs);
      }),
      { numRuns: 12, seed: 7 },
    );
  });
});
