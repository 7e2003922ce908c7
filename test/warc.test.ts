import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, deflateSync, gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { readCorpusFile, type CorpusItem, type SourceDocument } from '../indexer/corpus/index.js';
import { buildIndex } from '../src/build.js';
import { readIndexContent } from './helpers/index-files.js';
import { withEnv } from './helpers/env.js';
// @ts-expect-error: a plain ES module (the corpus scripts' WARC writer)
import { httpResponse, pageRecords, warcRecord, writeWarcOfFolder } from '../scripts/corpus/warc-writer.mjs';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-warc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string): string => {
  const d = join(dir, `c${n++}`);
  mkdirSync(d);
  return join(d, name);
};

type Rec = Buffer;
const DATE = '2024-05-06T07:08:09Z';
const record = (type: string, uri: string | undefined, contentType: string | undefined, block: Buffer | string, extra: Record<string, string> = {}): Rec =>
  warcRecord({ 'WARC-Type': type, 'WARC-Record-ID': `<urn:uuid:${type}-${n++}>`, 'WARC-Date': DATE, 'WARC-Target-URI': uri, 'Content-Type': contentType, ...extra }, block);
const response = (uri: string, body: Buffer | string, contentType = 'text/html', headers: Record<string, string> = {}, status = '200 OK'): Rec => {
  const b = Buffer.from(body);
  const head = [`HTTP/1.1 ${status}`, `Content-Type: ${contentType}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n');
  return record('response', uri, 'application/http; msgtype=response', Buffer.concat([Buffer.from(head + '\r\n\r\n'), b]));
};
/** A page whose only word is `word` (so a document's terms say which record it came from). */
const page = (word: string): Rec => response(`http://h/${word}`, `<html><title>${word}</title><body><p>${word}</p></body></html>`);

async function read(file: string, range?: { start: number; end: number }): Promise<{ docs: SourceDocument[]; skips: string[]; ignored: string[] }> {
  const docs: SourceDocument[] = [];
  const skips: string[] = [];
  const ignored: string[] = [];
  const base = join(file, '..');
  const name = file.slice(base.length + 1);
  for await (const it of readCorpusFile(base, name, {}, range) as AsyncIterable<CorpusItem>) {
    if (it.kind === 'doc') docs.push(it.doc);
    else if (it.kind === 'skip') skips.push(it.skip.reason);
    else ignored.push(it.what);
  }
  return { docs, skips, ignored };
}

const write = (name: string, records: Rec[], layout: 'plain' | 'members' | 'whole'): string => {
  const f = fresh(name);
  writeFileSync(f, layout === 'plain' ? Buffer.concat(records) : layout === 'whole' ? gzipSync(Buffer.concat(records)) : Buffer.concat(records.map((r) => gzipSync(r))));
  return f;
};
const words = (docs: SourceDocument[]): string[] => docs.map((d) => d.title);

describe('WARC records', () => {
  const records = [
    record('warcinfo', undefined, 'application/warc-fields', 'software: test\r\n'),
    record('request', 'http://h/a', 'application/http; msgtype=request', 'GET /a HTTP/1.1\r\nHost: h\r\n\r\n'),
    response('http://h/a', '<title>Alpha</title><p>first page</p>'),
    record('metadata', 'http://h/a', 'application/warc-fields', 'fetchTimeMs: 3\r\n'),
    response('http://h/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]), 'image/png'),
    response('http://h/app.js', 'var x = 1;', 'application/javascript'),
    response('http://h/moved', '', 'text/html', { Location: 'http://h/a' }, '301 Moved Permanently'),
    record('revisit', 'http://h/a', 'application/http; msgtype=response', 'HTTP/1.1 304 Not Modified\r\n\r\n'),
    response('http://h/chunked', '7\r\n<p>chun\r\n8\r\nked gzip\r\n5\r\n page\r\n0\r\n\r\n', 'text/html; charset=utf-8', { 'Transfer-Encoding': 'chunked' }),
    response('http://h/gz', gzipSync('<p>gzip coded</p>'), 'text/html', { 'Content-Encoding': 'gzip' }),
    response('http://h/br', brotliCompressSync('<p>brotli coded</p>'), 'text/html', { 'Content-Encoding': 'br' }),
    response('http://h/deflate', deflateSync('<p>deflate coded</p>'), 'text/html', { 'Content-Encoding': 'deflate' }),
    // Stored decoded under the original header, as Common Crawl did until 2018.
    response('http://h/stale', '<p>stale header</p>', 'text/html', { 'Content-Encoding': 'gzip' }),
    response('http://h/xhtml', '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body><p>xhtml body</p></body></html>', 'application/xhtml+xml'),
    record('resource', 'file:///notes.txt', 'text/plain', 'plain resource'),
    record('conversion', 'http://h/a', 'text/plain', 'Alpha first page as WET text'),
    record('response', 'dns:h', 'text/dns', '20240506070809\nh. 300 IN A 10.0.0.1\n'),
    record('resource', 'http://h/empty', 'text/plain', ''),
  ];
  const expected = {
    ids: ['http://h/a', 'http://h/chunked', 'http://h/gz', 'http://h/br', 'http://h/deflate', 'http://h/stale', 'http://h/xhtml', 'file:///notes.txt', 'http://h/a'],
    texts: ['first page', 'chunked gzip page', 'gzip coded', 'brotli coded', 'deflate coded', 'stale header', 'xhtml body', 'plain resource', 'Alpha first page as WET text'],
    ignored: ['warcinfo records', 'request records', 'metadata records', 'image/png payloads', 'application/javascript payloads', 'HTTP 3xx responses', 'revisit records', 'text/dns payloads', 'empty payloads'],
  };

  for (const layout of ['plain', 'members', 'whole'] as const) {
    it(`reads response, resource and conversion records of HTML and text, and counts the rest (${layout})`, async () => {
      const f = write(layout === 'plain' ? 'a.warc' : 'a.warc.gz', records, layout);
      const { docs, skips, ignored } = await read(f);
      expect(skips).toEqual([]);
      expect(docs.map((d) => d.externalId)).toEqual(expected.ids);
      expect(docs.map((d) => d.text.replace(/\s+/g, ' ').trim())).toEqual(expected.texts);
      expect(docs[0]!.title).toBe('Alpha');
      expect(docs[0]!.warc).toEqual({ date: DATE, recordId: expect.stringMatching(/^<urn:uuid:response-\d+>$/) });
      expect(ignored.join(";")).toEqual(expected.ignored.join(";"));
    });
  }

  it('reads records gzipped in members cut anywhere inside them, each member going on with the record before', async () => {
    const whole = Buffer.concat(records);
    const starts = new Set<number>();
    let at = 0;
    for (const r of records) {
      starts.add(at);
      at += r.length;
    }
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 1, max: whole.length - 1 }), { minLength: 1, maxLength: 12 }), async (cuts) => {
        // A cut at a record's start would make its member start the record: these go on with one.
        const points = [0, ...cuts.filter((c) => !starts.has(c)).sort((a, b) => a - b), whole.length];
        const f = fresh('split.warc.gz');
        writeFileSync(f, Buffer.concat(points.slice(1).map((end, i) => gzipSync(whole.subarray(points[i]!, end)))));
        const { docs, skips, ignored } = await read(f);
        expect(skips).toEqual([]);
        expect(docs.map((d) => d.externalId)).toEqual(expected.ids);
        expect(docs.map((d) => d.text.replace(/\s+/g, ' ').trim())).toEqual(expected.texts);
        expect(ignored.join(';')).toEqual(expected.ignored.join(';'));
      }),
      { numRuns: 40 },
    );
  });

  it('takes a .warc.wet.gz (Common Crawl text) as WARC', async () => {
    const f = write('CC-MAIN-x.warc.wet.gz', [record('warcinfo', undefined, 'application/warc-fields', 'x: y\r\n'), record('conversion', 'http://h/w', 'text/plain', 'wet words')], 'members');
    const { docs, ignored } = await read(f);
    expect(docs.map((d) => [d.externalId, d.text])).toEqual([['http://h/w', 'wet words']]);
    expect(ignored).toEqual(['warcinfo records']);
  });
});

describe('hostile WARC files: nothing good lost, each fault reported once', () => {
  const good = ['one', 'two', 'three', 'four', 'five'].map(page);
  const goodWords = ['one', 'two', 'three', 'four', 'five'];
  const withLength = (r: Rec, length: string | undefined): Rec => {
    const s = r.toString('latin1');
    const replaced = length === undefined ? s.replace(/Content-Length: \d+\r\n/, '') : s.replace(/Content-Length: \d+/, `Content-Length: ${length}`);
    return Buffer.from(replaced, 'latin1');
  };
  const offsetOf = (records: Rec[], k: number, layout: 'plain' | 'members'): number =>
    records.slice(0, k).reduce((a, r) => a + (layout === 'plain' ? r.length : gzipSync(r).length), 0);

  for (const layout of ['plain', 'members'] as const) {
    const name = layout === 'plain' ? 'h.warc' : 'h.warc.gz';
    const faults: [string, Rec, RegExp][] = [
      ['a Content-Length too large', withLength(page('bad'), '900'), /Content-Length|does not end with its gzip member/],
      ['a Content-Length too small', withLength(page('bad'), '10'), /Content-Length 10 does not end the block/],
      ['no Content-Length', withLength(page('bad'), undefined), /no Content-Length/],
      ['a Content-Length that is no number', withLength(page('bad'), '12x'), /bad Content-Length "12x"/],
      ['no WARC-Type', Buffer.from(page('bad').toString('latin1').replace(/WARC-Type: response\r\n/, ''), 'latin1'), /no WARC-Type/],
      ['no WARC-Target-URI', Buffer.from(page('bad').toString('latin1').replace(/WARC-Target-URI: \S+\r\n/, ''), 'latin1'), /without WARC-Target-URI/],
      ['an application/http response that is no HTTP', record('response', 'http://h/bad', 'application/http; msgtype=response', 'garbage, not HTTP'), /without an HTTP status line/],
      ['a bad HTTP status line', record('response', 'http://h/bad', 'application/http; msgtype=response', 'HTTP/1.1 OK\r\n\r\n<p>bad</p>'), /bad HTTP status line/],
      ['a gzip body cut short', response('http://h/bad', gzipSync('<p>a page that was cut</p>').subarray(0, 16), 'text/html', { 'Content-Encoding': 'gzip' }), /Content-Encoding gzip that does not decode/],
      // A document skipped for its damaged text names its record, as every other fault does (not the file alone).
      ['a page that is not valid UTF-8', response('http://h/bad', Buffer.from('<p>a bad \xff byte</p>', 'latin1')), /: invalid UTF-8 \(1 byte sequence that does not decode\)$/],
      ['a text record that is not valid in its declared charset', record('resource', 'http://h/bad', 'text/plain; charset=shift_jis', Buffer.from([0x61, 0x81, 0x20, 0x62])), /: invalid shift_jis \(1 byte sequence that does not decode\)$/],
    ];
    for (const [what, bad, reason] of faults) {
      it(`${what} (${layout})`, async () => {
        const records = [good[0]!, good[1]!, bad, good[2]!, good[3]!, good[4]!];
        const f = write(name, records, layout);
        const { docs, skips } = await read(f);
        expect(words(docs)).toEqual(goodWords);
        expect(skips).toHaveLength(1);
        expect(skips[0]).toMatch(reason);
        expect(skips[0]).toContain(`offset ${offsetOf(records, 2, layout)}`);
      });
    }

    it(`bytes between records (${layout})`, async () => {
      const garbage = Buffer.from('this is no record at all\r\n\r\n');
      const records = [good[0]!, good[1]!, garbage, good[2]!, good[3]!, good[4]!];
      const f = fresh(name);
      writeFileSync(f, layout === 'plain' ? Buffer.concat(records) : Buffer.concat(records.map((r) => (r === garbage ? r : gzipSync(r)))));
      const { docs, skips } = await read(f);
      expect(words(docs)).toEqual(goodWords);
      expect(skips).toEqual([expect.stringContaining(`offset ${offsetOf([good[0]!, good[1]!], 2, layout)}`)]);
    });

    it(`a file that ends after its last block, short of the CRLF CRLF that closes it (${layout})`, async () => {
      for (const cut of [1, 2, 4]) {
        const last = good[4]!.subarray(0, good[4]!.length - cut);
        const f = write(name, [...good.slice(0, 4), last], layout);
        const { docs, skips } = await read(f);
        expect(words(docs)).toEqual(goodWords);
        expect(skips).toEqual([]);
      }
    });

    it(`a file cut short in its last record (${layout})`, async () => {
      const whole = layout === 'plain' ? Buffer.concat(good) : Buffer.concat(good.map((r) => gzipSync(r)));
      const f = fresh(name);
      writeFileSync(f, whole.subarray(0, whole.length - 30));
      const { docs, skips } = await read(f);
      expect(words(docs)).toEqual(goodWords.slice(0, 4));
      expect(skips).toHaveLength(1);
      expect(skips[0]).toMatch(layout === 'plain' ? /offset \d+: record cut short/ : /gzip member at offset \d+: cut short/);
    });
  }

  it('a gzip member cut short in the middle of the file, and one whose bytes are corrupt', async () => {
    const members = good.map((r) => gzipSync(r));
    const cut = members[1]!.subarray(0, members[1]!.length - 20);
    const corrupt = Buffer.from(members[3]!);
    corrupt.fill(0x55, 20, 40);
    const f = fresh('m.warc.gz');
    writeFileSync(f, Buffer.concat([members[0]!, cut, members[2]!, corrupt, members[4]!]));
    const { docs, skips } = await read(f);
    expect(words(docs)).toEqual(['one', 'three', 'five']);
    expect(skips, skips.join("\n")).toHaveLength(2);
    expect(skips[0]).toMatch(new RegExp(`^gzip member at offset ${members[0]!.length}: `));
    expect(skips[1]).toMatch(new RegExp(`^gzip member at offset ${members[0]!.length + cut.length + members[2]!.length}: `));
  });

  it('a whole-file gzip member cut short keeps the records before the cut', async () => {
    const gz = gzipSync(Buffer.concat(good));
    const f = fresh('w.warc.gz');
    writeFileSync(f, gz.subarray(0, gz.length - 10));
    const { docs, skips } = await read(f);
    expect(words(docs)).toEqual(goodWords.slice(0, 4));
    expect(skips).toEqual([expect.stringMatching(/^gzip member at offset 0: cut short .*; the record in it is lost$/)]);
  });

  it('0-byte records and payloads are counted, not reported', async () => {
    const records = [good[0]!, record('resource', 'http://h/z', 'text/html', ''), record('response', 'http://h/z2', 'application/http; msgtype=response', ''), response('http://h/z3', ''), good[1]!];
    for (const layout of ['plain', 'members'] as const) {
      const { docs, skips, ignored } = await read(write(layout === 'plain' ? 'z.warc' : 'z.warc.gz', records, layout));
      expect(words(docs)).toEqual(['one', 'two']);
      expect(skips).toEqual([]);
      expect(ignored).toEqual(['empty payloads', 'empty records', 'empty payloads']);
    }
  });

  it('a 100 MB record is read whole, as are the records around it', async () => {
    const big = Buffer.alloc(100 * 2 ** 20, 'lorem ipsum ');
    big.write('firstword ', 0);
    big.write(' lastword', big.length - 9);
    const records = [good[0]!, record('resource', 'http://h/big', 'text/plain', big), good[1]!];
    for (const layout of ['plain', 'members'] as const) {
      const { docs, skips } = await read(write(layout === 'plain' ? 'b.warc' : 'b.warc.gz', records, layout));
      expect(skips).toEqual([]);
      expect(docs.map((d) => d.externalId)).toEqual(['http://h/one', 'http://h/big', 'http://h/two']);
      expect(docs[1]!.text.length).toBe(big.length);
      expect(docs[1]!.text.startsWith('firstword ') && docs[1]!.text.endsWith(' lastword')).toBe(true);
    }
  }, 60_000);

  it('random bytes between and instead of records: every intact record read once, one line per damaged stretch, never a throw', async () => {
    // A stretch of random bytes (with at least one byte that is not a line break) between two
    // records is one fault; one replacing a record is one fault and loses that record only.
    const stretch = fc.uint8Array({ minLength: 1, maxLength: 300 }).filter((b) => b.some((x) => x !== 0x0a && x !== 0x0d) && !Buffer.from(b).includes('WARC/1.'));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.boolean(), fc.option(stretch, { nil: undefined })), { minLength: 1, maxLength: 8 }), fc.constantFrom('plain' as const, 'members' as const), async (plan, layout) => {
        const parts: Buffer[] = [];
        const kept: string[] = [];
        let faults = 0;
        plan.forEach(([keep, junk], i) => {
          const word = `w${i}x`;
          if (junk) {
            parts.push(Buffer.from(junk));
            faults++;
          }
          if (keep) {
            const r = page(word);
            parts.push(layout === 'plain' ? r : gzipSync(r));
            kept.push(word);
          }
        });
        const f = fresh(layout === 'plain' ? 'r.warc' : 'r.warc.gz');
        writeFileSync(f, Buffer.concat(parts));
        const { docs, skips } = await read(f);
        expect(words(docs)).toEqual(kept);
        if (parts.length === 0) {
          expect(skips).toEqual(['empty file']);
          return;
        }
        // Adjacent stretches (no record between) are one stretch.
        let stretches = 0;
        let inJunk = false;
        for (const [keep, junk] of plan) {
          if (junk && !inJunk) stretches++;
          inJunk = junk ? !keep : inJunk && !keep;
        }
        expect(skips.length).toBe(stretches);
        expect(faults).toBeGreaterThanOrEqual(skips.length);
      }),
      { numRuns: 150 },
    );
  });
});

describe('WARC in builds', () => {
  /** Pages of several charsets, as files and as a WARC of the same pages in crawl order. */
  function pagesCrawl(): { files: string; warc: string } {
    const files = join(dir, `pages-${n++}`);
    mkdirSync(join(files, 'sub'), { recursive: true });
    writeFileSync(join(files, 'a.html'), '<html><head><title>Alpha page</title></head><body><p>The quick brown fox</p><script>var hidden;</script></body></html>');
    writeFileSync(join(files, 'b.html'), Buffer.from('<html><head><meta charset="iso-8859-1"><title>Caf\xe9</title></head><body>Na\xefve r\xe9sum\xe9 caf\xe9</body></html>', 'latin1'));
    writeFileSync(join(files, 'sub', 'c.html'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<title>UTF-16 page</title><p>wide characters here</p>', 'utf16le')]));
    writeFileSync(join(files, 'sub', 'd.htm'), Buffer.concat([Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS"><title>'), Buffer.from([0x93, 0xfa, 0x96, 0x7b]), Buffer.from('</title><p>tokyo</p>')]));
    writeFileSync(join(files, 'sub', 'e.txt'), 'plain text file with words');
    writeFileSync(join(files, 'sub', 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]));
    const warc = join(dir, `pages-warc-${n++}`);
    mkdirSync(warc);
    writeWarcOfFolder(files, join(warc, 'pages.warc.gz'), { baseUri: 'http://site.example/' });
    return { files, warc };
  }

  const build = (input: string, workers = 1) => {
    const output = join(dir, `idx-${n++}`);
    return buildIndex({ input, output, workers, sorter: 'cpu', blockSize: 64 }).then((summary) => ({ summary, output, content: readIndexContent(output) }));
  };

  it('the same pages as files and as a .warc.gz give the same postings, lexicon and document lengths; only the ids differ', async () => {
    const { files, warc } = pagesCrawl();
    const a = await build(files);
    const b = await build(warc);
    expect(b.summary.documents).toBe(5);
    expect(b.content.postings.equals(a.content.postings)).toBe(true);
    expect(b.content.terms).toEqual(a.content.terms);
    expect(b.content.stats).toEqual(a.content.stats);
    const rows = (c: typeof a.content) => c.docs as [number, string, string, number, string | null, string | null][];
    expect(rows(b.content).map((r) => r[3])).toEqual(rows(a.content).map((r) => r[3]));
    expect(rows(a.content).map((r) => r[1])).toEqual(['a.html', 'b.html', 'sub/c.html', 'sub/d.htm', 'sub/e.txt']);
    expect(rows(b.content).map((r) => r[1])).toEqual(['a.html', 'b.html', 'sub/c.html', 'sub/d.htm', 'sub/e.txt'].map((p) => `http://site.example/${p}`));
    // The WARC columns: set for WARC documents only.
    expect(rows(a.content).every((r) => r[4] === null && r[5] === null)).toBe(true);
    expect(rows(b.content).every((r) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(r[4]!) && /^<urn:uuid:[0-9a-f-]{36}>$/.test(r[5]!))).toBe(true);
    expect(b.summary.notIndexed).toEqual({ 'metadata records': 6, 'request records': 6, 'image/png payloads': 1, 'warcinfo records': 1 });
    expect(b.summary.skipped.count).toBe(0);
    expect(a.summary.unsupported.count).toBe(1);
  });

  it('with --positions, UTF-8 pages of titles of every length give the same postings and positions as files and as WARC (records read together, as .warc and .warc.gz)', async () => {
    // A plain .warc's records, and a member's, are read (and a UTF-8 page inverted from its
    // bytes) before the worker takes the first: each keeps its own title's length.
    const files = join(dir, `titled-${n++}`);
    mkdirSync(files);
    const titles = ['', 'One', 'Two words', 'A title of five words', '', 'Caf\u00e9 na\u00efve', 'x'];
    titles.forEach((t, i) => writeFileSync(join(files, `p${i}.html`), `<html><head>${t ? `<title>${t}</title>` : ''}</head><body><p>page ${i} body words here and there</p><p>two words</p></body></html>`));
    writeFileSync(join(files, 'q.txt'), 'a plain text file after titled pages');
    const warc = join(dir, `titled-warc-${n++}`);
    mkdirSync(warc);
    writeWarcOfFolder(files, join(warc, 'pages.warc.gz'), { baseUri: 'http://site.example/' });
    const plain = join(dir, `titled-plain-${n++}`);
    mkdirSync(plain);
    writeFileSync(join(plain, 'pages.warc'), gunzipSync(readFileSync(join(warc, 'pages.warc.gz'))));
    const withPositions = async (input: string, workers: number) => {
      const output = join(dir, `idx-${n++}`);
      await buildIndex({ input, output, workers, sorter: 'cpu', positions: true });
      return { postings: readFileSync(join(output, 'postings.bin')), positions: readFileSync(join(output, 'positions.bin')) };
    };
    const reference = await withPositions(files, 1);
    for (const input of [warc, plain]) {
      for (const workers of [1, 4]) {
        const got = await withPositions(input, workers);
        expect(got.postings.equals(reference.postings)).toBe(true);
        expect(got.positions.equals(reference.positions)).toBe(true);
      }
    }
  });

  it('a .warc.gz cut into member ranges gives the same index and the same fault lines, whatever the cut and the workers', async () => {
    const members: Buffer[] = [];
    for (let i = 0; i < 40; i++) members.push(gzipSync(i % 3 === 0 ? record('request', `http://h/${i}`, 'application/http', 'GET / HTTP/1.1\r\n\r\n') : page(`p${i}q`)));
    // Damage: a cut member, stray bytes, a member whose record's Content-Length runs on.
    members[7] = members[7]!.subarray(0, members[7]!.length - 9);
    members.splice(20, 0, Buffer.from('stray bytes between members'));
    members[30] = gzipSync(withLengthOf(page('long'), 5000));
    const crawl = join(dir, `ranged-${n++}`);
    mkdirSync(crawl);
    writeFileSync(join(crawl, 'crawl.warc.gz'), Buffer.concat(members));
    const whole = await withEnv('GPUINDEX_RANGE_BYTES', async (set) => {
      set(undefined);
      return build(crawl, 1);
    });
    expect(whole.summary.skipped.count, JSON.stringify(whole.summary.skipped.items)).toBe(3);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4000 }), fc.integer({ min: 1, max: 3 }), async (rangeBytes, workers) => {
        const cut = await withEnv('GPUINDEX_RANGE_BYTES', async (set) => {
          set(String(rangeBytes));
          return build(crawl, workers);
        });
        expect(cut.content).toEqual(whole.content);
        expect(cut.summary.skipped).toEqual(whole.summary.skipped);
        expect(cut.summary.notIndexed).toEqual(whole.summary.notIndexed);
      }),
      { numRuns: 12 },
    );
  }, 120_000);

  it('--resume keeps the WARC columns of the documents in reused runs', async () => {
    const crawl = join(dir, `resume-${n++}`);
    mkdirSync(crawl);
    const words = Array.from({ length: 3000 }, (_, i) => `page${i}word alpha${i % 7} beta${i % 11} gamma`);
    writeFileSync(join(crawl, 'r.warc.gz'), Buffer.concat(words.map((w, i) => gzipSync(response(`http://h/${i}`, `<p>${w}</p>`)))));
    const opts = { input: crawl, workers: 1, sorter: 'cpu' as const, pipeline: 'cpu' as const, blockSize: 100 };
    const reference = join(dir, `ref-${n++}`);
    await buildIndex({ ...opts, output: reference });
    const parent = join(dir, `resumed-${n++}`);
    mkdirSync(parent);
    const output = join(parent, 'index');
    const controller = new AbortController();
    await expect(
      buildIndex({ ...opts, output, resume: true, signal: controller.signal, onProgress: (e) => e.stage === 'parse' && e.blocksSorted >= 3 && controller.abort() }),
    ).rejects.toThrow();
    const warnings: string[] = [];
    await buildIndex({ ...opts, output, resume: true, onWarning: (m) => warnings.push(m) });
    expect(warnings.some((w) => /^resume: reusing [1-9]\d* completed run/.test(w))).toBe(true);
    expect(readIndexContent(output)).toEqual(readIndexContent(reference));
    expect((readIndexContent(output).docs as unknown[][]).every((r) => typeof r[4] === 'string' && typeof r[5] === 'string')).toBe(true);
  });

  it('keeps the WARC columns through join and optimize (segment merges copy the document rows)', async () => {
    const crawl = join(dir, `two-${n++}`);
    mkdirSync(crawl);
    writeFileSync(join(crawl, 'a.warc.gz'), Buffer.concat([page('alpha'), page('beta')].map((r) => gzipSync(r))));
    writeFileSync(join(crawl, 'b.warc.gz'), Buffer.concat([page('gamma')].map((r) => gzipSync(r))));
    const single = await build(crawl);
    const { joinShards, optimizeIndex } = await import('../src/index.js');
    const shards = [];
    for (let i = 0; i < 2; i++) {
      const output = join(dir, `shard-${n++}`);
      await buildIndex({ input: crawl, output, workers: 1, sorter: 'cpu', blockSize: 64, shard: `${i}/2` });
      shards.push(output);
    }
    const joined = join(dir, `joined-${n++}`);
    joinShards(joined, shards);
    optimizeIndex(joined);
    const db = new Database(join(joined, 'index.sqlite'), { readonly: true });
    try {
      expect(db.prepare('SELECT * FROM docs ORDER BY doc_id').raw().all()).toEqual(single.content.docs);
    } finally {
      db.close();
    }
  });
});

function withLengthOf(r: Rec, length: number): Rec {
  return Buffer.from(r.toString('latin1').replace(/Content-Length: \d+/, `Content-Length: ${length}`), 'latin1');
}

// Kept for the types of the helpers imported from the .mjs writer.
void httpResponse;
void pageRecords;
