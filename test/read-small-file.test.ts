import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { isUtf8 } from 'node:buffer';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readCorpusFile, type CorpusItem } from '../indexer/corpus/index.js';
import { readSmallFileSync } from '../indexer/corpus/read-small-file.js';
import { createTokenizer } from '../indexer/analysis/tokenizer.js';
import { DocumentInverter, LocalTerms } from '../indexer/scan/document-inverter.js';
import { tokenStrings } from './helpers/raw-tokens.js';

const root = mkdtempSync(join(tmpdir(), 'gpuindex-small-file-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function viaReader(path: string): Promise<CorpusItem[]> {
  const items: CorpusItem[] = [];
  for await (const item of readCorpusFile(root, path)) items.push(item);
  return items;
}

describe('readSmallFileSync', () => {
  const files: [string, string | Buffer][] = [
    ['a.txt', 'plain words here\n'],
    ['b.html', '<html><head><title>T</title></head><body><p>x &amp; y</p></body></html>'],
    ['c.md', '# Heading\n\nbody text\n'],
    ['latin.html', Buffer.concat([Buffer.from('<meta charset="iso-8859-1"><p>caf'), Buffer.from([0xe9]), Buffer.from('</p>')])],
    ['utf16.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('wide text', 'utf16le')])],
    ['bad-utf8.txt', Buffer.from([0x61, 0x20, 0xc3, 0x28, 0x20, 0x62])],
    ['bom.txt', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('after bom')])],
    ['binary.txt', Buffer.from([0x61, 0x00, 0x62])],
    ['empty.txt', ''],
    ['large.txt', 'w '.repeat((1 << 19) + 10)],
    ['packed.txt.gz', gzipSync('zipped words')],
    ['lines.jsonl', '{"text":"a"}\n'],
  ];
  for (const [name, bytes] of files) writeFileSync(join(root, name), bytes);
  mkdirSync(join(root, 'folder.txt'));

  it('gives the item readCorpusFile gives, or leaves the file to it', async () => {
    const taken: string[] = [];
    for (const name of [...files.map(([n]) => n), 'folder.txt', 'missing.txt']) {
      const item = readSmallFileSync(root, name);
      if (item === undefined) continue;
      taken.push(name);
      expect([item]).toEqual(await viaReader(name));
    }
    // What it must take (small, readable, whole-document formats) and must leave (larger than its buffer, gzip, JSONL, empty, not a file, missing).
    expect(taken).toEqual(['a.txt', 'b.html', 'c.md', 'latin.html', 'utf16.txt', 'bad-utf8.txt', 'bom.txt', 'binary.txt']);
  });

  it('agrees with readCorpusFile on random bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), fc.constantFrom('r.txt', 'r.html', 'r.md'), async (bytes, name) => {
        writeFileSync(join(root, name), bytes);
        const item = readSmallFileSync(root, name);
        if (bytes.length > 0) expect(item).toBeDefined();
        if (item) expect([item]).toEqual(await viaReader(name));
      }),
      { numRuns: 200 },
    );
  });

  it('inverts a UTF-8 .txt file, and a UTF-8 .html page\'s extracted text, from their bytes as the decoded documents are inverted (the same terms in order)', async () => {
    // Two inverters numbering raw tokens as they come: one fed bytes, one the decoded documents,
    // file after file. The words around a letter beyond ASCII take the Unicode analysis on the
    // bytes' side, whose cache is not the scanner's: a raw token may get a second local id there,
    // so the two are compared by the terms their ids stand for.
    const viaBytes = new LocalTerms();
    const viaText = new LocalTerms();
    const tokenizer = createTokenizer({});
    const bytesInverter = new DocumentInverter(tokenizer, viaBytes);
    const textInverter = new DocumentInverter(tokenizer, viaText);
    expect(bytesInverter.wasmScan).toBe(true);
    const fromBytes = { txt: 0, html: 0 };
    const rawsViaBytes: string[] = [];
    const rawsViaText: string[] = [];
    let mixedPages = 0;
    /** The terms local ids stand for (the raw tokens `terms` numbered so far, analysed). */
    const termsOf = (ids: number[], terms: LocalTerms, raws: string[]): (string | null)[] => {
      raws.push(...tokenStrings(terms.takeUnsent()));
      return ids.map((id) => tokenizer.analyzeToken(raws[id]!));
    };
    const ascii = fc.string({ unit: fc.constantFrom('a', 'b', 'Z', '9', ' ', '\n', '.', "'", '-', '_', '\t', 'the', 'and', '\u0000'), maxLength: 200 });
    // Text files in UTF-8: separators, letters beyond ASCII, an emoji; some with a BOM.
    const utf8 = fc.tuple(fc.boolean(), fc.string({ unit: fc.constantFrom('a', 'Z', '9', ' ', '\n', 'the', "'", '\u00b6', '\u2019', '\u00a0', '\u00e9', '\u00c9t\u00e9', '\u03a3', '\ud83d\ude00'), maxLength: 80 })).map(([bom, t]) => Buffer.from(`${bom ? '\ufeff' : ''}${t}`, 'utf8'));
    // Page text: ASCII, separators (stand-ins), other characters (words analysed apart), an entity, markup.
    const words = fc.string({ unit: fc.constantFrom('a', 'b', 'Z', '9', ' ', 'the', 'and', "'", '\u00b6', '\u2019', '\u00a0', '\u2014', '\u00e9', '\ud83d\ude00', '&amp;', '&nbsp;', '<b>', '</b>', '<p>', '<br>'), maxLength: 60 });
    const page = fc.tuple(words, words).map(([title, body]) => Buffer.from(`<html><head><title>${title}</title></head><body><p>${body}</p></body></html>`, 'utf8'));
    const file = fc.oneof(
      fc.tuple(fc.oneof(ascii.map((t) => Buffer.from(t, 'latin1')), utf8, fc.uint8Array({ maxLength: 100 }).map((b) => Buffer.from(b))), fc.constantFrom('r.txt', 'r.md', 'r.html')),
      fc.tuple(page, fc.constant('r.html')),
    );
    await fc.assert(
      fc.asyncProperty(file, async ([bytes, name]) => {
        writeFileSync(join(root, name), bytes);
        let called: 'txt' | 'html' | undefined;
        const item = readSmallFileSync(root, name, {
          utf8Text: (title, text) => {
            const termIds = bytesInverter.invertUtf8(title, text);
            if (termIds) called = name === 'r.txt' ? 'txt' : 'html';
            return termIds;
          },
        });
        const [reference] = await viaReader(name);
        // A generated page (UTF-8) is never declined now, whatever characters its text holds.
        if (bytes.subarray(0, 19).toString('latin1') === '<html><head><title>') expect(called).toBe('html');
        // So is a text file in UTF-8 (valid, no NUL), ASCII or not.
        if (name === 'r.txt' && item?.kind === 'doc' && isUtf8(bytes)) expect(called).toBe('txt');
        if (!called) {
          // Not UTF-8, a NUL, empty, or a .md file: decoded as before.
          expect(item === undefined || JSON.stringify(item) === JSON.stringify(reference)).toBe(true);
          if (item?.kind === 'doc') bytesInverter.invert(item.doc);
          if (reference?.kind === 'doc') textInverter.invert(reference.doc);
          return;
        }
        fromBytes[called]++;
        if (/[\u00e9\u03a3\ud83d]/.test(bytes.toString('utf8'))) mixedPages++;
        expect(name).toBe(called === 'txt' ? 'r.txt' : 'r.html');
        expect(item?.kind).toBe('doc');
        expect(reference?.kind).toBe('doc');
        if (item?.kind !== 'doc' || reference?.kind !== 'doc') return;
        expect(item.doc.externalId).toBe(reference.doc.externalId);
        expect(item.doc.bytes).toBe(reference.doc.bytes);
        const expected = [...textInverter.invert(reference.doc)];
        expect(termsOf([...item.doc.termIds!], viaBytes, rawsViaBytes)).toEqual(termsOf(expected, viaText, rawsViaText));
        expect(bytesInverter.titleLength).toBe(textInverter.titleLength);
      }),
      { numRuns: 800 },
    );
    expect(fromBytes.txt).toBeGreaterThan(30);
    expect(fromBytes.html).toBeGreaterThan(30);
    expect(mixedPages).toBeGreaterThan(30);
  });
});
