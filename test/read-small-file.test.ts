import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readCorpusFile, type CorpusItem } from '../indexer/corpus/index.js';
import { readSmallFileSync } from '../indexer/corpus/read-small-file.js';
import { createTokenizer } from '../indexer/analysis/tokenizer.js';
import { DocumentInverter, LocalTerms } from '../indexer/scan/document-inverter.js';

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

  it('inverts an ASCII .txt file from its bytes as the decoded document is inverted (same TermIds, same raw tokens numbered)', async () => {
    // Two inverters numbering raw tokens alike: one fed bytes, one the decoded documents, file after file.
    const viaBytes = new LocalTerms();
    const viaText = new LocalTerms();
    const tokenizer = createTokenizer({});
    const bytesInverter = new DocumentInverter(tokenizer, viaBytes);
    const textInverter = new DocumentInverter(tokenizer, viaText);
    expect(bytesInverter.wasmScan).toBe(true);
    let fromBytes = 0;
    const ascii = fc.string({ unit: fc.constantFrom('a', 'b', 'Z', '9', ' ', '\n', '.', "'", '-', '_', '\t', 'the', 'and', '\u0000'), maxLength: 200 });
    await fc.assert(
      fc.asyncProperty(fc.oneof(ascii.map((t) => Buffer.from(t, 'latin1')), fc.uint8Array({ maxLength: 100 }).map((b) => Buffer.from(b))), fc.constantFrom('r.txt', 'r.md', 'r.html'), async (bytes, name) => {
        writeFileSync(join(root, name), bytes);
        let called = false;
        const item = readSmallFileSync(root, name, (b) => {
          called = true;
          return bytesInverter.invertAsciiBytes(b);
        });
        const [reference] = await viaReader(name);
        if (!called) {
          // Not ASCII, a NUL, empty, or not a .txt: decoded as before.
          expect(item === undefined || JSON.stringify(item) === JSON.stringify(reference)).toBe(true);
          if (item?.kind === 'doc') bytesInverter.invert(item.doc);
          if (reference?.kind === 'doc') textInverter.invert(reference.doc);
          return;
        }
        fromBytes++;
        expect(name).toBe('r.txt');
        expect(item?.kind).toBe('doc');
        expect(reference?.kind).toBe('doc');
        if (item?.kind !== 'doc' || reference?.kind !== 'doc') return;
        expect(item.doc.externalId).toBe(reference.doc.externalId);
        expect(item.doc.bytes).toBe(reference.doc.bytes);
        expect([...item.doc.termIds!]).toEqual([...textInverter.invert(reference.doc)]);
        expect(viaBytes.count).toBe(viaText.count);
      }),
      { numRuns: 600 },
    );
    expect(fromBytes).toBeGreaterThan(30);
    expect(viaBytes.takeUnsent()).toEqual(viaText.takeUnsent());
  });
});
