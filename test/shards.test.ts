import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { joinShards } from '../src/join.js';
import { optimizeIndex } from '../src/optimize.js';
import { openIndex } from '../src/reader.js';
import { linesBefore, parseShard, shardPieces } from '../indexer/parse/shards.js';
import { verifyIndex } from '../merge/verify.js';
import { readIndexContent } from './helpers/index-files.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-shards-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => join(work, `${name}-${n++}`);

const WORDS = ['whale', 'ship', 'sea', 'ahab', 'white', 'harpoon', 'deck', 'storm', 'oil', 'boat', 'crew', 'moby', 'dick', 'ocean', 'captain', 'mast'];

/** A crawl of JSONL files (with and without ids, blank lines among them), text and Markdown files. */
const crawlArb = fc.array(
  fc.record({
    kind: fc.constantFrom('jsonl', 'jsonl-noid', 'txt', 'md'),
    docs: fc.array(fc.array(fc.integer({ min: 0, max: WORDS.length - 1 }), { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 25 }),
    blankEvery: fc.integer({ min: 0, max: 5 }),
  }),
  { minLength: 1, maxLength: 5 },
);

function writeCrawl(dir: string, files: fc.Infer<typeof crawlArb>): void {
  mkdirSync(dir, { recursive: true });
  files.forEach((f, i) => {
    const text = (d: number[]) => d.map((w) => WORDS[w]).join(' ');
    if (f.kind === 'txt' || f.kind === 'md') {
      writeFileSync(join(dir, `f${i}.${f.kind}`), f.docs.map(text).join('\n'));
      return;
    }
    const lines = f.docs.map((d, k) => JSON.stringify(f.kind === 'jsonl' ? { id: `f${i}-${k}`, text: text(d) } : { text: text(d) }));
    const withBlanks = lines.flatMap((l, k) => (f.blankEvery > 0 && k % f.blankEvery === 0 ? ['', l] : [l]));
    writeFileSync(join(dir, `f${i}.jsonl`), withBlanks.join('\n') + '\n');
  });
}

const analysis = { stem: 'none', stopwords: 'none', sorter: 'cpu' } as const;

describe('sharded builds joined', () => {
  it('join + optimize is the single build, and search over the joined shards answers as the single build (any crawl, N = 1..7)', async () => {
    await fc.assert(
      fc.asyncProperty(crawlArb, fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 2 }), async (files, count, workers) => {
        const crawl = fresh('crawl');
        writeCrawl(crawl, files);
        const single = fresh('single');
        await buildIndex({ input: crawl, output: single, workers, ...analysis });
        const shards: string[] = [];
        for (let i = 0; i < count; i++) {
          const out = fresh(`shard${i}`);
          await buildIndex({ input: crawl, output: out, workers, shard: `${i}/${count}`, ...analysis });
          shards.push(out);
        }
        const joined = fresh('joined');
        // Given in another order: join orders them by shard index.
        joinShards(joined, [...shards].reverse());
        expect(verifyIndex(joined).segments).toBe(count);
        const a = openIndex(single);
        const b = openIndex(joined);
        try {
          expect(b.stats()).toEqual(a.stats());
          expect([...b.documents()]).toEqual([...a.documents()]);
          for (const q of ['whale', 'white whale', 'ship sea storm', 'moby dick captain oil']) expect(b.search(q, { k: 50 })).toEqual(a.search(q, { k: 50 }));
          expect(b.postingsOf('ahab')).toEqual(a.postingsOf('ahab'));
          expect([...b.lexicon()].map((e) => [e.term, e.df, e.cf])).toEqual([...a.lexicon()].map((e) => [e.term, e.df, e.cf]));
        } finally {
          a.close();
          b.close();
        }
        optimizeIndex(joined);
        verifyIndex(joined);
        expect(readIndexContent(joined)).toEqual(readIndexContent(single));
      }),
      { numRuns: 15, seed: 4242 },
    );
  }, 400_000);

  const twoShards = async () => {
    const crawl = fresh('crawl');
    writeCrawl(crawl, [{ kind: 'jsonl', docs: [[1, 2], [3], [4, 5, 6], [7]], blankEvery: 0 }, { kind: 'txt', docs: [[8, 9]], blankEvery: 0 }]);
    const dirs = [];
    for (const s of ['0/2', '1/2']) {
      const out = fresh('s');
      await buildIndex({ input: crawl, output: out, shard: s, ...analysis });
      dirs.push(out);
    }
    return { crawl, dirs };
  };

  it('exports a joined index as CIFF byte for byte as the single build', async () => {
    const { crawl, dirs } = await twoShards();
    const { exportCiff } = await import('../src/ciff/ciff.js');
    const { readFileSync } = await import('node:fs');
    const single = fresh('single');
    await buildIndex({ input: crawl, output: single, ...analysis });
    const joined = fresh('joined');
    joinShards(joined, dirs);
    const [a, b] = [openIndex(single), openIndex(joined)];
    try {
      exportCiff(a, join(work, 'a.ciff'), 'x');
      exportCiff(b, join(work, 'b.ciff'), 'x');
      expect(readFileSync(join(work, 'b.ciff'))).toEqual(readFileSync(join(work, 'a.ciff')));
    } finally {
      a.close();
      b.close();
    }
  });

  it('refuses, in one line each, a missing shard, a repeated one, another crawl, other settings, and an index that is no shard', async () => {
    const { crawl, dirs } = await twoShards();
    expect(() => joinShards(fresh('j'), [dirs[0]!])).toThrow('join: shard 1/2 is missing');
    expect(() => joinShards(fresh('j'), [dirs[0]!, dirs[0]!])).toThrow(`join: shard 0/2 is given twice: ${dirs[0]} and ${dirs[0]}`);
    const stemmed = fresh('s');
    await buildIndex({ input: crawl, output: stemmed, shard: '1/2', sorter: 'cpu', stopwords: 'none' });
    expect(() => joinShards(fresh('j'), [dirs[0]!, stemmed])).toThrow(`join: ${stemmed} was built with other analysis settings than ${dirs[0]}`);
    writeFileSync(join(crawl, 'extra.txt'), 'more text');
    const other = fresh('s');
    await buildIndex({ input: crawl, output: other, shard: '1/2', ...analysis });
    expect(() => joinShards(fresh('j'), [dirs[0]!, other])).toThrow(`join: ${other} was built from another crawl listing than ${dirs[0]}`);
    const plain = fresh('plain');
    await buildIndex({ input: crawl, output: plain, ...analysis });
    expect(() => joinShards(fresh('j'), [plain])).toThrow(`join: ${plain} is not a shard (built without --shard)`);
    const three = fresh('s');
    await buildIndex({ input: crawl, output: three, shard: '2/3', ...analysis });
    expect(() => joinShards(fresh('j'), [dirs[0]!, three])).toThrow(`join: ${three} is shard 2/3, ${dirs[0]} is one of 2`);
  });
});

describe('shard cuts', () => {
  const fileArb = fc.array(fc.record({ size: fc.integer({ min: 0, max: 200 }), jsonl: fc.boolean() }), { minLength: 1, maxLength: 8 });

  it('cover every byte of a cuttable file and every other file exactly once, in crawl order, over the N shards', () => {
    fc.assert(
      fc.property(fileArb, fc.integer({ min: 1, max: 9 }), (specs, count) => {
        const dir = fresh('cut');
        mkdirSync(dir);
        const files = specs.map((s, i) => `f${i}.${s.jsonl ? 'jsonl' : 'txt'}`);
        specs.forEach((s, i) => writeFileSync(join(dir, files[i]!), 'x'.repeat(s.size)));
        const sizes = specs.map((s) => s.size);
        const all = Array.from({ length: count }, (_, i) => shardPieces(dir, files, sizes, { index: i, count })).flat();
        // In crawl order, each file's pieces contiguous from 0 to its size.
        const seen = new Map<string, number>();
        let last = -1;
        for (const p of all) {
          const f = files.indexOf(p.path);
          expect(f).toBeGreaterThanOrEqual(last);
          last = f;
          expect(p.from).toBe(seen.get(p.path) ?? 0);
          expect(p.to).toBeGreaterThanOrEqual(p.from);
          seen.set(p.path, p.to);
        }
        for (const [i, f] of files.entries()) expect(seen.get(f)).toBe(sizes[i]);
        // Only JSONL files are cut.
        for (const p of all) if (p.path.endsWith('.txt')) expect([p.from, p.to]).toEqual([0, p.size]);
      }),
      { numRuns: 200 },
    );
  });

  it('counts the lines that start before a cut as a scan of the file does', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', '\n', '\r'), { maxLength: 60 }), fc.nat(), (chars, at) => {
        const text = chars.join('');
        const dir = fresh('lines');
        mkdirSync(dir);
        writeFileSync(join(dir, 'f.jsonl'), text);
        const from = text.length ? 1 + (at % text.length) : 0;
        if (from === 0) return;
        // Lines starting at an offset below `from`: offset 0 and every offset after a newline.
        let starts = 1;
        for (let p = 0; p + 1 < from; p++) if (text[p] === '\n') starts++;
        expect(linesBefore(dir, 'f.jsonl', from)).toEqual({ lineBase: starts, items: 1 });
      }),
    );
  });

  it('--shard takes i/N and the schedulers\' variables, and words every mistake', () => {
    expect(parseShard('2/5')).toEqual({ index: 2, count: 5 });
    expect(parseShard('auto', { SLURM_ARRAY_TASK_ID: '4', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_COUNT: '4' })).toEqual({ index: 3, count: 4 });
    expect(parseShard('auto', { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_COUNT: '2' })).toEqual({ index: 0, count: 2 });
    expect(parseShard('auto', { JOB_COMPLETION_INDEX: '6', JOB_COMPLETIONS: '7' })).toEqual({ index: 6, count: 7 });
    expect(() => parseShard('5/5')).toThrow('--shard 5/5: shard index 5 is not in 0..4');
    expect(() => parseShard('1-4')).toThrow('--shard must be i/N (0 <= i < N) or auto, got "1-4"');
    expect(() => parseShard('auto', {})).toThrow('--shard auto: no scheduler task found (SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX)');
    expect(() => parseShard('auto', { JOB_COMPLETION_INDEX: '1' })).toThrow("JOB_COMPLETIONS is not (pass the Job's spec.completions)");
    expect(() => parseShard('auto', { SLURM_ARRAY_TASK_ID: 'x', SLURM_ARRAY_TASK_COUNT: '2' })).toThrow('SLURM_ARRAY_TASK_ID must be a non-negative integer, got "x"');
  });
});
