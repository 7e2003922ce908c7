import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { settleMeanwhile } from '../indexer/pipeline/worker-pipeline.js';
import { buildIndex } from '../src/build.js';
import { withEnv } from './helpers/env.js';
import { readIndexContent } from './helpers/index-files.js';
import { hasGpu } from './helpers/gpu-available.js';
import Database from 'better-sqlite3';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-stages-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the per-stage report of a build with parse workers', () => {
  it('reports each worker: busy and idle spanning Parse+Sort, credit waits within idle, start before first batch before last', async () => {
    const crawl = join(dir, 'crawl');
    mkdirSync(crawl);
    for (let f = 0; f < 6; f++) {
      const lines = Array.from({ length: 200 }, (_, i) => JSON.stringify({ id: `${f}-${i}`, text: `whale ${f} sea ${i} ship captain harpoon` }));
      writeFileSync(join(crawl, `f${f}.jsonl`), lines.join('\n') + '\n');
    }
    const s = await buildIndex({ input: crawl, output: join(dir, 'idx'), workers: 2, sorter: 'cpu', blockSize: 1000 });
    const span = s.timings.parseSortMs;
    for (const name of ['parser0', 'parser1']) {
      const p = s.stages[name]!;
      expect(p.busyMs + p.idleMs).toBeCloseTo(Math.max(span, p.busyMs), 0);
      expect(p.blockedMs).toBeGreaterThanOrEqual(0);
      expect(p.blockedMs!).toBeLessThanOrEqual(p.idleMs + 1);
      expect(p.startedAtMs).toBeGreaterThanOrEqual(0);
      expect(p.startedAtMs!).toBeLessThanOrEqual(p.firstBatchAtMs! + 1);
      expect(p.firstBatchAtMs!).toBeLessThanOrEqual(p.lastBatchAtMs!);
      expect(p.lastBatchAtMs!).toBeLessThanOrEqual(span + 1);
    }
    expect(s.stages.fill!.batchWaitMs).toBeGreaterThanOrEqual(0);
  });

  it('reports what workers with blocks of their own waited for blocks they handed over: nothing where they sort their own', async () => {
    const crawl = join(dir, 'crawl');
    const own = await buildIndex({ input: crawl, output: join(dir, 'idx-own'), workers: 4, sorter: 'cpu', blockSize: 1000 });
    const parsers = Object.entries(own.stages).filter(([k]) => /^parser\d+$/.test(k)).map(([, v]) => v);
    expect(parsers).toHaveLength(4);
    for (const p of parsers) expect([p.blockWaitMs, p.endWaitMs]).toEqual([0, 0]);
    // One dictionary (2 workers): the workers fill no blocks, and report no such wait.
    const shared = await buildIndex({ input: crawl, output: join(dir, 'idx-shared'), workers: 2, sorter: 'cpu', blockSize: 1000 });
    expect(shared.stages.parser0!.blockWaitMs).toBeUndefined();
  });

  it.runIf(hasGpu())('reports the waits of workers whose one block goes to the GPU thread (Indexgpu): each seal waits for it', async () => {
    const s = await buildIndex({ input: join(dir, 'crawl'), output: join(dir, 'idx-gpu-wait'), workers: 4, pipeline: 'gpu', blockSize: 1000 });
    const parsers = Object.entries(s.stages).filter(([k]) => /^parser\d+$/.test(k)).map(([, v]) => v);
    expect(s.blocks).toBeGreaterThan(4);
    expect(parsers.reduce((a, p) => a + p.blockWaitMs!, 0)).toBeGreaterThan(0);
    for (const p of parsers) expect(p.endWaitMs).toBeGreaterThanOrEqual(0);
  });

  it('lays out the timeline: sort, write, written per block in order with its pairs, then last batch, workers closed, released', async () => {
    const s = await buildIndex({ input: join(dir, 'crawl'), output: join(dir, 'idx-timeline'), workers: 2, sorter: 'cpu', blockSize: 1000 });
    const blockEvents = s.timeline.filter((m) => ['sort', 'write', 'written'].includes(m.event));
    expect(blockEvents.map((m) => m.event)).toEqual(Array.from({ length: s.blocks }, () => ['sort', 'write', 'written']).flat());
    // Each block's three events carry its pairs; the blocks' pairs add up to the build's.
    const sorts = blockEvents.filter((m) => m.event === 'sort');
    expect(sorts.reduce((a, m) => a + m.pairs!, 0)).toBe(s.pairs);
    for (let b = 0; b < s.blocks; b++) expect(new Set(blockEvents.slice(3 * b, 3 * b + 3).map((m) => m.pairs)).size).toBe(1);
    const ends = s.timeline.filter((m) => m.pairs === undefined).map((m) => m.event);
    expect(ends).toEqual(['last batch', 'workers closed', 'released']);
    const times = s.timeline.map((m) => m.atMs);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times.at(-1)!).toBeLessThanOrEqual(s.timings.parseSortMs + 1);
    // The CPU the phase took: the process's, of which the main thread's and the other live threads' (Linux).
    expect(s.cpu.processMs).toBeGreaterThan(0);
    if (process.platform === 'linux') expect(s.cpu.mainThreadMs! + s.cpu.otherThreadsMs!).toBeLessThanOrEqual(s.cpu.processMs + 20);
  });

  it('reports the merge threads\' span and the main thread\'s appending of their parts', async () => {
    const s = await buildIndex({ input: join(dir, 'crawl'), output: join(dir, 'idx-merge'), workers: 1, sorter: 'cpu', blockSize: 1000, mergeThreads: 2 });
    expect(s.merge.threads).toBe(2);
    expect(s.merge.threadsMs).toBeGreaterThan(0);
    expect(s.merge.appendMs).toBeGreaterThanOrEqual(0);
    expect(s.merge.threadsMs!).toBeLessThanOrEqual(s.timings.mergeMs + 1);
    const single = await buildIndex({ input: join(dir, 'crawl'), output: join(dir, 'idx-merge1'), workers: 1, sorter: 'cpu', blockSize: 1000, mergeThreads: 1 });
    expect(single.merge.threadsMs).toBeUndefined();
  });
});

describe('the parse pool', () => {
  it('terminates each worker once it has sent its last batch and no task is left; every batch still arrives', async () => {
    const { ParsePool } = await import('../indexer/parse/parse-pool.js');
    const { createTokenizer } = await import('../indexer/analysis/tokenizer.js');
    const root = join(dir, 'pool');
    mkdirSync(root);
    // One long file and two short ones: the worker given a short one finishes first.
    const write = (name: string, docs: number) =>
      writeFileSync(join(root, name), Array.from({ length: docs }, (_, i) => JSON.stringify({ id: `${name}-${i}`, text: `alpha beta gamma ${i}` })).join('\n') + '\n');
    write('a.jsonl', 3000);
    write('b.jsonl', 10);
    write('c.jsonl', 10);
    const tasks = ['a.jsonl', 'b.jsonl', 'c.jsonl'].map((path) => ({ path, bytes: 1 }));
    const pool = new ParsePool(tasks, 2, { root, corpus: {}, tokenizer: createTokenizer().options, batchPairs: 256, credits: 2 }, 1 << 20);
    let documents = 0;
    for await (const arrival of pool.batches()) {
      documents += arrival.batch.externalIds.length;
      pool.consumed(arrival);
    }
    // Both are gone before close(), and their exits (code 1, from terminate) were not taken for failures.
    expect(documents).toBe(3020);
    expect(pool.retiredWorkers).toBe(2);
    await pool.close();
  });
});

describe('document rows written ahead, then the rest by the merge', () => {
  it('give the same docs table as all rows written by the merge', async () => {
    const { DocumentTable } = await import('../indexer/fill/documents.js');
    const { INDEX_DB } = await import('../merge/index-store.js');
    const { writeIndex } = await import('../merge/write-index.js');
    const { contentsIn } = await import('./helpers/index-contents.js');
    const tables: unknown[] = [];
    for (const ahead of [true, false]) {
      const documents = new DocumentTable();
      for (let i = 0; i < 1000; i++) documents.add(`doc-${i}`, `file-${i % 7}.jsonl`, i % 13);
      const out = join(dir, `rows-ahead-${ahead}`);
      mkdirSync(out);
      const contents = contentsIn(out, [], documents);
      if (ahead) {
        expect(contents.rows.writeSome()).toBe(true);
        expect(contents.rows.writeSome()).toBe(true);
        expect(contents.rows.count).toBe(512);
      }
      writeIndex(out, [], contents, 1 << 20);
      const db = new Database(join(out, INDEX_DB), { readonly: true });
      tables.push(db.prepare('SELECT * FROM docs ORDER BY doc_id').all());
      db.close();
    }
    expect(tables[0]).toHaveLength(1000);
    expect(tables[0]).toEqual(tables[1]);
  });
});

describe('benchmark knobs of the parse pool', () => {
  it('GPUINDEX_TASKS_AHEAD: 1 by default, an integer from 1 to 8, else a one-line error', async () => {
    const { tasksAheadFromEnv } = await import('../indexer/parse/parse-pool.js');
    const saved = process.env.GPUINDEX_TASKS_AHEAD;
    try {
      delete process.env.GPUINDEX_TASKS_AHEAD;
      expect(tasksAheadFromEnv()).toBe(1);
      process.env.GPUINDEX_TASKS_AHEAD = '3';
      expect(tasksAheadFromEnv()).toBe(3);
      process.env.GPUINDEX_TASKS_AHEAD = '0';
      expect(() => tasksAheadFromEnv()).toThrow('GPUINDEX_TASKS_AHEAD must be an integer from 1 to 8, got 0');
    } finally {
      if (saved === undefined) delete process.env.GPUINDEX_TASKS_AHEAD;
      else process.env.GPUINDEX_TASKS_AHEAD = saved;
    }
  });
});

describe('document rows written while the parse waits', () => {
  it('in the sequential schedules, and in the overlapped one where the workers leave a core spare; GPUINDEX_ROWS_AHEAD decides instead', async () => {
    const { writeRowsAhead } = await import('../src/build.js');
    await withEnv('GPUINDEX_ROWS_AHEAD', (set) => {
      set(undefined);
      expect(writeRowsAhead('overlapped', 15, 16)).toBe(false); // Indexgpu+ with the default workers
      expect(writeRowsAhead('overlapped', 14, 16)).toBe(true);
      expect(writeRowsAhead('overlapped', 9, 16)).toBe(true);
      expect(writeRowsAhead('sequential', 15, 16)).toBe(true);
      expect(writeRowsAhead('sequential', 1, 2)).toBe(true);
      set('1');
      expect(writeRowsAhead('overlapped', 15, 16)).toBe(true);
      set('0');
      expect(writeRowsAhead('sequential', 1, 2)).toBe(false);
      set('2');
      expect(() => writeRowsAhead('sequential', 1, 2)).toThrow('GPUINDEX_ROWS_AHEAD must be an integer from 0 to 1, got 2');
    });
  });

  it('give the same index.sqlite tables as rows left to the merge', async () => {
    const crawl = join(dir, 'crawl');
    const rows = await withEnv('GPUINDEX_ROWS_AHEAD', async (set) => {
      const out: Record<string, { ahead: number; docs: unknown[]; terms: unknown[]; bytes: Buffer }> = {};
      for (const knob of ['1', '0']) {
        set(knob);
        const output = join(dir, `idx-rows-${knob}`);
        const s = await buildIndex({ input: crawl, output, workers: 1, sorter: 'cpu', blockSize: 500 });
        const content = readIndexContent(output);
        out[knob] = { ahead: s.merge.documentRowsAhead, docs: content.docs, terms: content.terms, bytes: readFileSync(join(output, 'index.sqlite')) };
      }
      return out;
    });
    // Whether the parse ever waited for a batch with rows to write depends on timing (under a
    // loaded test run the worker can stay ahead all along); the test below writes rows ahead
    // for certain.
    expect(rows['0']!.ahead).toBe(0);
    expect(rows['1']!.docs).toHaveLength(1200);
    expect(rows['1']!.docs).toEqual(rows['0']!.docs);
    expect(rows['1']!.terms).toEqual(rows['0']!.terms);
    // Rows go in batch by batch whatever was written ahead: the same bytes.
    expect(rows['1']!.bytes.equals(rows['0']!.bytes)).toBe(true);
  });
});

describe('settleMeanwhile (the main thread writing document rows while the sort stage finishes)', () => {
  it('runs idle pieces until the promise settles, then stops', async () => {
    let resolve!: () => void;
    const p = new Promise<void>((r) => (resolve = r));
    let pieces = 0;
    const waiting = settleMeanwhile(p, () => {
      if (++pieces === 5) resolve();
      return true;
    });
    await waiting;
    const atSettle = pieces;
    await new Promise((r) => setImmediate(r));
    expect(atSettle).toBeGreaterThanOrEqual(5);
    expect(atSettle).toBeLessThanOrEqual(6);
    expect(pieces).toBe(atSettle);
  });

  it('stops calling idle once it has nothing left, and passes a rejection on', async () => {
    let pieces = 0;
    let reject!: (e: Error) => void;
    const p = new Promise<void>((_, r) => (reject = r));
    // The rejection comes two turns after idle says it has nothing left (no timer: a loaded
    // machine once let a 20 ms timer fire before the third piece): a caller that went on
    // calling idle would count more pieces by then.
    const waiting = settleMeanwhile(p, () => {
      if (++pieces === 3) setImmediate(() => setImmediate(() => reject(new Error('sort failed'))));
      return pieces < 3;
    });
    await expect(waiting).rejects.toThrow('sort failed');
    expect(pieces).toBe(3);
  });
});
