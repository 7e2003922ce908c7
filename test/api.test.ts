import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// The published entry point, as a consumer imports it (package self-reference to dist/).
import { AbortError, buildIndex, openIndex, type ProgressEvent } from 'gpuindex';
import { readIndexContent } from './helpers/index-files.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-api-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;

function synthCrawl(dir: string, files: number, docsPerFile: number): void {
  mkdirSync(dir, { recursive: true });
  for (let f = 0; f < files; f++) {
    const lines = Array.from({ length: docsPerFile }, (_, d) => JSON.stringify({ id: `f${f}d${d}`, text: Array.from({ length: 50 }, (_, w) => `word${(f * 31 + d * 7 + w * 13) % 997}`).join(' ') }));
    writeFileSync(join(dir, `part-${String(f).padStart(3, '0')}.jsonl`), lines.join('\n') + '\n');
  }
}

describe('library API', () => {
  it('buildIndex and the CLI give identical indexes, and the summary is what build --json prints', async () => {
    const viaApi = join(work, 'api');
    const viaCli = join(work, 'cli');
    const summary = await buildIndex({ input: 'corpus-samples', output: viaApi, sorter: 'cpu' });
    const r = spawnSync(process.execPath, [cli, 'build', 'corpus-samples', '-o', viaCli, '--sorter', 'cpu', '--json'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const cliSummary = JSON.parse(r.stdout);
    expect(Object.keys(cliSummary).sort()).toEqual(Object.keys(summary).sort());
    expect(cliSummary.documents).toBe(summary.documents);
    expect(cliSummary.terms).toBe(summary.terms);
    expect(readIndexContent(viaCli)).toEqual(readIndexContent(viaApi));
  });

  it('takes documents as an async iterable and serves search, postings, documents and stats', async () => {
    const output = join(work, 'iterable');
    async function* docs() {
      yield { id: 'moby', title: 'Moby-Dick', text: 'Call me Ishmael. The white whale.' };
      yield { id: 'pequod', text: 'The Pequod hunts whales', fields: { captain: 'Ahab' } };
      yield { id: 'empty', text: '' };
    }
    const summary = await buildIndex({ input: docs(), output, stem: 'porter', stopwords: 'english' });
    expect(summary.documents).toBe(3);
    const reader = openIndex(output);
    try {
      expect(reader.search('white whale', { k: 2 }).map((h) => h.externalId)).toEqual(['moby', 'pequod']);
      const postings: { docId: number; tf: number }[] = [];
      for await (const p of reader.postings('Whales')) postings.push(p);
      expect(postings).toEqual([
        { docId: 0, tf: 1 },
        { docId: 1, tf: 1 },
      ]);
      expect(reader.search('ahab')[0]!.externalId).toBe('pequod');
      expect(reader.document(2)).toEqual({ docId: 2, externalId: 'empty', path: '', length: 0 });
      expect(reader.stats()).toMatchObject({ documents: 3, totalTokens: summary.pairs });
    } finally {
      reader.close();
    }
  });

  it('reports progress events that never go backwards and end at 100 %', async () => {
    const crawl = join(work, 'progress-crawl');
    synthCrawl(crawl, 6, 400);
    const events: ProgressEvent[] = [];
    await buildIndex({ input: crawl, output: join(work, 'progress'), blockSize: 5000, workers: 2, sorter: 'cpu', onProgress: (e) => events.push({ ...e }) });
    expect(events.length).toBeGreaterThanOrEqual(2); // the first event, and "done" (others are throttled to 10 a second)
    for (let i = 1; i < events.length; i++) {
      const [a, b] = [events[i - 1]!, events[i]!];
      expect(b.documents).toBeGreaterThanOrEqual(a.documents);
      expect(b.bytes).toBeGreaterThanOrEqual(a.bytes);
      expect(b.blocksSorted).toBeGreaterThanOrEqual(a.blocksSorted);
      expect(b.parseFraction ?? 0).toBeGreaterThanOrEqual(a.parseFraction ?? 0);
    }
    const last = events[events.length - 1]!;
    expect(last).toMatchObject({ stage: 'done', documents: 2400, parseFraction: 1, mergeFraction: 1 });
  });

  it('stops on abort within a block, rejects with AbortError and leaves nothing behind', async () => {
    const crawl = join(work, 'abort-crawl');
    synthCrawl(crawl, 20, 500);
    const parent = join(work, 'abort-out');
    mkdirSync(parent);
    const output = join(parent, 'index');
    const controller = new AbortController();
    let blocksAtAbort = -1;
    const build = buildIndex({
      input: crawl,
      output,
      blockSize: 2000,
      workers: 2,
      sorter: 'cpu',
      signal: controller.signal,
      onProgress: (e) => {
        if (e.blocksSorted >= 2 && blocksAtAbort < 0) {
          blocksAtAbort = e.blocksSorted;
          controller.abort();
        }
      },
    });
    await expect(build).rejects.toBeInstanceOf(AbortError);
    await expect(build).rejects.toThrow('the build was aborted');
    expect(blocksAtAbort).toBeGreaterThanOrEqual(2);
    expect(existsSync(output)).toBe(false);
    expect(readdirSync(parent)).toEqual([]); // no temporary folder, no runs
  });

  it('rejects a signal that is already aborted before touching the output', async () => {
    const output = join(work, 'never');
    await expect(buildIndex({ input: 'corpus-samples', output, signal: AbortSignal.abort() })).rejects.toBeInstanceOf(AbortError);
    expect(existsSync(output)).toBe(false);
  });
});

describe('the ingestion service example (examples/ingest-service.ts)', () => {
  it('type-checks against the published .d.ts', () => {
    const tsc = new URL('../node_modules/typescript/bin/tsc', import.meta.url).pathname;
    const r = spawnSync(process.execPath, [tsc, '-p', 'examples/tsconfig.json', '--noEmit'], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('adds, replaces and deletes documents that arrive over HTTP, searchable after a refresh, and a restart keeps them', async () => {
    const { createIngestService } = await import('../examples/ingest-service.js');
    const dir = join(work, 'ingest');
    const start = async () => {
      const service = await createIngestService({ dir, refreshMs: 0 });
      await new Promise<void>((resolve) => service.server.listen(0, '127.0.0.1', () => resolve()));
      return { service, base: `http://127.0.0.1:${(service.server.address() as AddressInfo).port}` };
    };
    const ids = async (base: string, q: string) => ((await (await fetch(`${base}/search?q=${q}&k=10`)).json()).hits as { externalId: string }[]).map((h) => h.externalId).sort();
    let { service, base } = await start();
    try {
      expect(await ids(base, 'whale')).toEqual([]);
      const post = await fetch(`${base}/documents`, { method: 'POST', body: JSON.stringify([{ id: 'a', text: 'the white whale' }, { id: 'b', text: 'a grey ship' }]) });
      expect(post.status).toBe(202);
      expect(await post.json()).toEqual({ accepted: 2 });
      // Not searchable before a refresh.
      expect(await ids(base, 'whale')).toEqual([]);
      expect(await (await fetch(`${base}/flush`, { method: 'POST' })).json()).toEqual({ documents: 2 });
      expect(await ids(base, 'whale')).toEqual(['a']);
      // NDJSON; 'a' replaced (no whale now), 'c' and 'd' new; 'b' deleted.
      await fetch(`${base}/documents`, { method: 'POST', body: '{"id":"c","text":"whale oil"}\n{"id":"d","text":"whale bone and whale oil"}\n{"id":"a","text":"a white ship"}\n' });
      expect((await fetch(`${base}/documents/b`, { method: 'DELETE' })).status).toBe(202);
      expect((await fetch(`${base}/documents/nope`, { method: 'DELETE' })).status).toBe(404);
      await fetch(`${base}/flush`, { method: 'POST' });
      expect(await ids(base, 'whale')).toEqual(['c', 'd']);
      expect(await ids(base, 'ship')).toEqual(['a']);
      expect((await fetch(`${base}/documents`, { method: 'POST', body: '[{"id": 1}]' })).status).toBe(400);
      // A restart: everything acknowledged is there, nothing was rebuilt.
      await service.close();
      ({ service, base } = await start());
      await fetch(`${base}/flush`, { method: 'POST' });
      expect(await ids(base, 'whale')).toEqual(['c', 'd']);
      expect((await (await fetch(`${base}/stats`)).json()).stats.documents).toBe(3);
    } finally {
      await service.close();
    }
  });
});
