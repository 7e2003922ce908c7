import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { charsetParameter, decideEncoding, metaCharset } from '../indexer/corpus/charset.js';
import { readCorpusFile, type SourceDocument } from '../indexer/corpus/index.js';
// @ts-expect-error: a plain ES module (the corpus scripts' WARC writer)
import { warcRecord } from '../scripts/corpus/warc-writer.mjs';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-charset-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bytes = (...parts: (string | number[])[]): Buffer => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
// Shift_JIS bytes of 日本語 (Japanese), and of テスト (test).
const NIHONGO = [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea];
const TESUTO = [0x83, 0x65, 0x83, 0x58, 0x83, 0x67];

/** Pages in legacy charsets, each with the text a browser shows. */
const pages: { name: string; body: Buffer; title: string; text: string }[] = [
  { name: 'latin1.html', body: bytes('<meta charset="ISO-8859-1"><title>Caf\xe9</title><p>na\xefve gar\xe7on</p>'), title: 'Café', text: 'naïve garçon' },
  // windows-1252's 0x80-0x9f (euro sign, curly quotes), where ISO-8859-1 has controls: the WHATWG maps latin1 to windows-1252.
  { name: 'cp1252.html', body: bytes('<meta http-equiv="Content-Type" content="text/html; charset=windows-1252"><title>\x93Quoted\x94</title><p>price 5\x80</p>'), title: '“Quoted”', text: 'price 5€' },
  { name: 'sjis.html', body: bytes('<html><head><meta charset=shift_jis><title>', NIHONGO, '</title></head><p>', TESUTO, '</p></html>'), title: '日本語', text: 'テスト' },
  { name: 'utf16.html', body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<title>Wide</title><p>ünïcödé text</p>', 'utf16le')]), title: 'Wide', text: 'ünïcödé text' },
  { name: 'utf16be.html', body: Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('<title>Big</title><p>endian</p>', 'utf16le').swap16()]), title: 'Big', text: 'endian' },
];

async function docsOf(base: string, name: string): Promise<{ docs: SourceDocument[]; skips: string[] }> {
  const docs: SourceDocument[] = [];
  const skips: string[] = [];
  for await (const it of readCorpusFile(base, name)) {
    if (it.kind === 'doc') docs.push(it.doc);
    else if (it.kind === 'skip') skips.push(it.skip.reason);
  }
  return { docs, skips };
}
const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();

describe('charsets, decided as a browser decides them', () => {
  it('HTML files on disk: latin-1, windows-1252, shift_jis and UTF-16 with a BOM', async () => {
    const d = join(dir, 'files');
    mkdirSync(d);
    for (const p of pages) writeFileSync(join(d, p.name), p.body);
    for (const p of pages) {
      const { docs, skips } = await docsOf(d, p.name);
      expect(skips, p.name).toEqual([]);
      expect([docs[0]!.title, squash(docs[0]!.text)], p.name).toEqual([p.title, p.text]);
    }
  });

  it('WARC responses: the same pages, by their meta tags or by the HTTP charset', async () => {
    const d = join(dir, 'warc');
    mkdirSync(d);
    const records = pages.map((p, i) =>
      warcRecord({ 'WARC-Type': 'response', 'WARC-Target-URI': `http://h/${i}`, 'Content-Type': 'application/http; msgtype=response' }, Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n'), p.body])),
    );
    // No meta tag: only the HTTP header names the charset.
    records.push(
      warcRecord({ 'WARC-Type': 'response', 'WARC-Target-URI': 'http://h/http', 'Content-Type': 'application/http; msgtype=response' }, bytes('HTTP/1.1 200 OK\r\nContent-Type: text/html; charset="Shift_JIS"\r\n\r\n<title>', NIHONGO, '</title>')),
    );
    writeFileSync(join(d, 'p.warc.gz'), Buffer.concat(records.map((r: Buffer) => gzipSync(r))));
    const { docs, skips } = await docsOf(d, 'p.warc.gz');
    expect(skips).toEqual([]);
    expect(docs.map((x) => [x.title, squash(x.text)])).toEqual([...pages.map((p) => [p.title, p.text]), ['日本語', '']]);
  });

  it('the order: BOM, then the HTTP charset, then <meta> in the first 1,024 bytes, then UTF-8', () => {
    const meta = bytes('<meta charset="windows-1252">');
    expect(decideEncoding(bytes([0xef, 0xbb, 0xbf], '<meta charset="shift_jis">'), 'text/html; charset=windows-1252', true)).toEqual({ name: 'utf-8', bom: 3, source: 'bom' });
    expect(decideEncoding(meta, 'text/html; charset=shift_jis', true)).toEqual({ name: 'shift_jis', bom: 0, source: 'http' });
    expect(decideEncoding(meta, 'text/html', true)).toEqual({ name: 'windows-1252', bom: 0, source: 'meta' });
    expect(decideEncoding(meta, 'text/html; charset=no-such-charset', true).source).toBe('meta'); // an unknown label is no decision
    expect(decideEncoding(meta, undefined, false).source).toBe('default'); // text: no meta prescan
    expect(decideEncoding(bytes(' '.repeat(1024), '<meta charset="windows-1252">'), undefined, true).source).toBe('default');
    expect(decideEncoding(bytes('<!-- <meta charset="koi8-r"> --><meta charset="gb2312">'), undefined, true).name).toBe('gbk'); // comments skipped; gb2312 is gbk
    expect(metaCharset(bytes('<meta charset="utf-16le">'))).toBe('utf-8'); // the prescan's rule: ASCII bytes were read, so not UTF-16
    expect(metaCharset(bytes('<meta name="description" content="charset=koi8-r is a word here">'))).toBeUndefined();
    expect(metaCharset(bytes("<META HTTP-EQUIV='content-type' CONTENT='text/html;charset=EUC-KR'>"))).toBe('euc-kr');
    expect(charsetParameter('text/html; Charset="ISO-8859-2"; q=1')).toBe('ISO-8859-2');
  });

  it('bytes a charset cannot decode: the document is skipped with how many were replaced, as for UTF-8', async () => {
    const d = join(dir, 'bad');
    mkdirSync(d);
    writeFileSync(join(d, 'bad.html'), bytes('<meta charset="shift_jis"><p>ok ', [0x81, 0x20], ' end</p>'));
    writeFileSync(join(d, 'bad-utf8.html'), bytes('<p>ok \xff end</p>'));
    expect((await docsOf(d, 'bad.html')).skips).toEqual(['invalid shift_jis (1 byte sequence that does not decode)']);
    expect((await docsOf(d, 'bad-utf8.html')).skips).toEqual(['invalid UTF-8 (1 byte sequence that does not decode)']);
  });
});
