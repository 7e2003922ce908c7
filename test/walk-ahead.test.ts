/**
 * A crawl walked ahead on its own thread (indexer/corpus/walk-ahead.ts, started by the CLI as it
 * starts): the listing the build takes is listCorpusFiles' own, and the CLI's index and summary
 * are the same with or without it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { listCorpusFiles } from '../indexer/corpus/walk.js';
import { takeWalkAhead, walkAhead } from '../indexer/corpus/walk-ahead.js';
import { readIndexContent } from './helpers/index-files.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-walk-ahead-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => join(work, `${name}-${n++}`);

/** Entries of a crawl: documents, unsupported files, links (inside, outside, broken), nested folders. */
const KINDS = ['txt', 'md', 'html', 'jsonl', 'bin', 'link-in', 'link-out', 'broken', 'dir'] as const;

function writeCrawl(dir: string, kinds: (typeof KINDS)[number][], seed: number): void {
  mkdirSync(dir, { recursive: true });
  const outside = fresh('outside');
  writeFileSync(outside, 'far away\n');
  let depth = dir;
  kinds.forEach((kind, i) => {
    // Names whose order by code units differs from a case-blind one.
    const name = `${i % 2 ? 'B' : 'a'}${(i * 7 + seed) % 13}-${i}`;
    if (kind === 'dir') {
      depth = join(depth, name);
      mkdirSync(depth);
    } else if (kind === 'bin') writeFileSync(join(depth, `${name}.bin`), 'x');
    else if (kind === 'link-in') symlinkSync(join(dir, 'nowhere.txt'), join(depth, `${name}.txt`));
    else if (kind === 'link-out') symlinkSync(outside, join(depth, `${name}.txt`));
    else if (kind === 'broken') symlinkSync(join(work, 'missing', name), join(depth, `${name}.txt`));
    else if (kind === 'jsonl') writeFileSync(join(depth, `${name}.jsonl`), JSON.stringify({ id: name, text: `w${i} shared words` }) + '\n');
    else writeFileSync(join(depth, `${name}.${kind}`), `w${i} shared words ${seed}\n`);
  });
  writeFileSync(join(dir, 'nowhere.txt'), 'the target of a link inside\n');
}

describe('a crawl walked ahead', () => {
  it('gives the listing of a walk on this thread (fuzzed folders), once, and only for its own folder', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...KINDS), { maxLength: 40 }), fc.nat(100), async (kinds, seed) => {
        const dir = fresh('crawl');
        writeCrawl(dir, kinds, seed);
        walkAhead(dir);
        expect(takeWalkAhead(join(dir, 'other'))).toBeUndefined();
        const taken = takeWalkAhead(dir);
        expect(taken).toBeDefined();
        expect(await taken).toEqual(await listCorpusFiles(dir));
        expect(takeWalkAhead(dir)).toBeUndefined();
      }),
      { numRuns: 25 },
    );
  });

  it('gives undefined where the walk fails, so that the build walks and words the failure itself', async () => {
    walkAhead(join(work, 'no-such-folder'));
    expect(await takeWalkAhead(join(work, 'no-such-folder'))).toBeUndefined();
  });

  it('leaves the CLI build the same: index bytes, documents and the skipped and unsupported files', () => {
    const dir = fresh('crawl');
    writeCrawl(dir, ['txt', 'dir', 'md', 'bin', 'link-out', 'html', 'dir', 'broken', 'jsonl', 'link-in', 'txt'], 3);
    const cli = resolve(__dirname, '..', 'dist', 'src', 'cli.js');
    const run = (prestart: string) => {
      const out = fresh('idx');
      const r = spawnSync(process.execPath, [cli, 'build', dir, '-o', out, '--sorter', 'cpu', '--json', '-q'], { encoding: 'utf8', env: { ...process.env, GPUINDEX_PRESTART: prestart } });
      expect(r.status, r.stderr).toBe(0);
      const s = JSON.parse(r.stdout);
      return { content: readIndexContent(out), documents: s.documents, skipped: s.skipped, unsupported: s.unsupported };
    };
    const walkedAhead = run('1');
    const walkedHere = run('0');
    expect(walkedAhead.documents).toBe(6);
    expect(walkedAhead.skipped.count).toBe(3);
    expect(walkedAhead).toEqual(walkedHere);
  });

  it('is not used for an output inside the crawl: the stale temporary folder the build removes first is never listed', () => {
    const cli = resolve(__dirname, '..', 'dist', 'src', 'cli.js');
    const run = (prestart: string) => {
      const dir = fresh('crawl');
      writeCrawl(dir, ['txt', 'md', 'dir', 'txt'], 5);
      // What a build killed earlier left beside the output (its pid is long gone).
      const stale = join(dir, '.idx.gpuindex-tmp-999999999-abcd');
      mkdirSync(stale);
      for (let i = 0; i < 50; i++) writeFileSync(join(stale, `left${i}.txt`), `left over ${i}\n`);
      const out = join(dir, 'idx');
      const r = spawnSync(process.execPath, [cli, 'build', dir, '-o', out, '--sorter', 'cpu', '--json', '-q'], { encoding: 'utf8', env: { ...process.env, GPUINDEX_PRESTART: prestart } });
      expect(r.status, r.stderr).toBe(0);
      const s = JSON.parse(r.stdout);
      return { documents: s.documents, skipped: s.skipped, docs: readIndexContent(out).docs.map((d) => (d as unknown[]).slice(1)) };
    };
    const walkedAhead = run('1');
    expect(walkedAhead.documents).toBe(4);
    expect(walkedAhead).toEqual(run('0'));
  });
});
