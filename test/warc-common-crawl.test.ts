/**
 * Real Common Crawl records: the sample the npm package `warc` 1.0.1 ships in its test fixtures
 * (CC-MAIN-2014-35, one WARC file cut to 13 records and its WET), read and indexed.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { readCorpusFile, type SourceDocument } from '../indexer/corpus/index.js';
import { buildIndex } from '../src/build.js';

const require = createRequire(import.meta.url);
const fixtures = join(dirname(require.resolve('warc/package.json')), 'test', 'fixtures');
const NAME = 'CC-MAIN-20140820021334-00006-ip-10-180-136-8.ec2.internal';
const dir = mkdtempSync(join(tmpdir(), 'gpuindex-cc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function read(file: string) {
  const docs: SourceDocument[] = [];
  const skips: string[] = [];
  const ignored: string[] = [];
  for await (const it of readCorpusFile(fixtures, file)) {
    if (it.kind === 'doc') docs.push(it.doc);
    else if (it.kind === 'skip') skips.push(it.skip.reason);
    else ignored.push(it.what);
  }
  return { docs, skips, ignored };
}

const PAGES = [
  'http://0pointer.de/photos/?gallery=Australia&photo=496',
  'http://0pointer.de/photos/?gallery=Thailand%202011-01&photo=726&show_thumbs=yes&exif_style=',
  'http://0x20.be/Special:WhatLinksHere/Thread:Talk:Gentse_feesten/foo',
];

describe('Common Crawl records (npm warc 1.0.1 fixtures)', () => {
  it('the fixtures are there', () => {
    expect(existsSync(join(fixtures, `${NAME}.warc`))).toBe(true);
  });

  it('WARC: the three HTML responses are documents (one stored decoded under Content-Encoding: gzip, one truncated by the crawler); the rest is counted', async () => {
    const { docs, skips, ignored } = await read(`${NAME}.warc`);
    expect(skips).toEqual([]);
    expect(docs.map((d) => d.externalId)).toEqual(PAGES);
    expect(docs.map((d) => d.warc)).toEqual([
      { date: '2014-08-21T05:52:58Z', recordId: '<urn:uuid:d2ce4c32-7c09-477e-87c9-36e8e49ce467>' },
      { date: '2014-08-21T06:06:05Z', recordId: '<urn:uuid:4d6e9288-d174-493b-a373-8a822759982b>' },
      { date: '2014-08-21T04:31:23Z', recordId: '<urn:uuid:a448a920-781f-4f53-a5c6-ca9f215239c4>' },
    ]);
    expect(docs[2]!.title).toBe('Pages that link to "Thread:Talk:Gentse feesten/foo" - Whitespace (Hackerspace Gent)');
    expect(docs.every((d) => d.text.trim().length > 100)).toBe(true);
    const counts: Record<string, number> = {};
    for (const w of ignored) counts[w] = (counts[w] ?? 0) + 1;
    // The first response is an empty 200 (an ad redirector's).
    expect(counts).toEqual({ 'warcinfo records': 1, 'request records': 4, 'metadata records': 4, 'empty payloads': 1 });
  });

  it('WET: the conversion records are documents with the same URIs', async () => {
    const { docs, skips, ignored } = await read(`${NAME}.warc.wet`);
    expect(skips).toEqual([]);
    expect(ignored).toEqual(['warcinfo records']);
    expect(docs.map((d) => d.externalId)).toEqual(PAGES);
    expect(docs[0]!.text).toContain('Photos');
  });

  it('indexed: URIs as ids, WARC-Date and WARC-Record-ID in the document table, the other records in the summary', async () => {
    const crawl = join(dir, 'crawl');
    mkdirSync(crawl);
    copyFileSync(join(fixtures, `${NAME}.warc`), join(crawl, `${NAME}.warc`));
    const output = join(dir, 'idx');
    const summary = await buildIndex({ input: crawl, output, workers: 1, sorter: 'cpu' });
    expect(summary.documents).toBe(3);
    expect(summary.skipped.count).toBe(0);
    expect(summary.notIndexed).toEqual({ 'metadata records': 4, 'request records': 4, 'empty payloads': 1, 'warcinfo records': 1 });
    const db = new Database(join(output, 'index.sqlite'), { readonly: true });
    try {
      const rows = db.prepare('SELECT external_id, path, warc_date, warc_record_id FROM docs ORDER BY doc_id').raw().all();
      expect(rows).toEqual([
        [PAGES[0], `${NAME}.warc`, '2014-08-21T05:52:58Z', '<urn:uuid:d2ce4c32-7c09-477e-87c9-36e8e49ce467>'],
        [PAGES[1], `${NAME}.warc`, '2014-08-21T06:06:05Z', '<urn:uuid:4d6e9288-d174-493b-a373-8a822759982b>'],
        [PAGES[2], `${NAME}.warc`, '2014-08-21T04:31:23Z', '<urn:uuid:a448a920-781f-4f53-a5c6-ca9f215239c4>'],
      ]);
    } finally {
      db.close();
    }
  });
});
