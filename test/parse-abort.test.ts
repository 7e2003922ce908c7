import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ParsePool } from '../indexer/parse/parse-pool.js';
import { createTokenizer } from '../indexer/analysis/tokenizer.js';
import { buildIndex } from '../src/build.js';
import { readIndexContent } from './helpers/index-files.js';
// @ts-expect-error: a plain ES module (the corpus scripts' WARC writer)
import { warcRecord } from '../scripts/corpus/warc-writer.mjs';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-parse-abort-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A .warc.gz of `pages` HTML responses, one gzip member each: a worker inflates a member a page. */
function writeWarc(path: string, pages: number, salt: number): void {
  const members: Buffer[] = [];
  for (let i = 0; i < pages; i++) {
    const body = `<html><title>p${salt}x${i}</title><body><p>alpha${i % 13} beta${i % 7} gamma ${'word '.repeat(40)}</p></body></html>`;
    const block = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n${body}`);
    members.push(gzipSync(warcRecord({ 'WARC-Type': 'response', 'WARC-Record-ID': `<urn:uuid:${salt}-${i}>`, 'WARC-Date': '2024-05-06T07:08:09Z', 'WARC-Target-URI': `http://h/${salt}/${i}`, 'Content-Type': 'application/http; msgtype=response' }, block)));
  }
  writeFileSync(path, Buffer.concat(members));
}

describe('closing the parse pool before the crawl is parsed', () => {
  const crawl = join(dir, 'crawl');
  mkdirSync(crawl);
  for (let f = 0; f < 6; f++) writeWarc(join(crawl, `f${f}.warc.gz`), 2000, f);

  it('asks busy workers to stop between documents, and none is terminated inside a parse', async () => {
    const tasks = Array.from({ length: 6 }, (_, f) => ({ path: `f${f}.warc.gz`, bytes: 1 << 20 }));
    const pool = new ParsePool(tasks, 3, { root: crawl, corpus: {}, tokenizer: createTokenizer().options, batchPairs: 512, credits: 1 }, 1 << 20);
    let taken = 0;
    for await (const arrival of pool.batches()) {
      pool.consumed(arrival);
      if (++taken === 3) break;
    }
    // Every worker still holds WARC pages to parse.
    expect(pool.retiredWorkers).toBe(0);
    await pool.close();
    expect({ stopped: pool.stoppedOnAbort, terminated: pool.terminatedBusy }).toEqual({ stopped: 3, terminated: 0 });
  });

  it('a build aborted mid-parse of the WARC crawl rejects, and the next build to the same output equals a fresh one', async () => {
    const output = join(dir, 'index');
    const controller = new AbortController();
    const opts = { input: crawl, output, workers: 3, sorter: 'cpu' as const, blockSize: 4096 };
    await expect(buildIndex({ ...opts, signal: controller.signal, onProgress: (e) => e.stage === 'parse' && e.blocksSorted >= 2 && controller.abort() })).rejects.toThrow();
    const reference = join(dir, 'reference');
    await buildIndex({ ...opts, output: reference });
    await buildIndex({ ...opts });
    expect(readIndexContent(output)).toEqual(readIndexContent(reference));
  });
});
