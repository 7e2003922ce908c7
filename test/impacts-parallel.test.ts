/**
 * impacts.bin, however it is made: by a pass over postings.bin on one thread or several (term
 * ranges), or by the merge itself (one thread, or each merge thread its range), is one file.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { IMPACTS_FILE, writeImpacts, writeImpactsParallel } from '../merge/impacts.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-impacts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('impacts on threads', () => {
  it('give impacts.bin byte for byte as one thread does, with the lengths given or read, for 1 to 5 threads', async () => {
    const crawl = join(dir, 'crawl');
    mkdirSync(crawl);
    // Frequent terms (lists of many blocks) and rare ones, documents of varied lengths.
    const lines = Array.from({ length: 900 }, (_, d) => JSON.stringify({ id: `d${d}`, text: Array.from({ length: 5 + ((d * 37) % 90) }, (_, k) => `w${(d * k) % 400} common${k % 3}`).join(' ') }));
    writeFileSync(join(crawl, 'a.jsonl'), lines.join('\n') + '\n');
    const index = join(dir, 'index');
    await buildIndex({ input: crawl, output: index, workers: 1, sorter: 'cpu' });
    const one = join(dir, 'one');
    mkdirSync(one);
    for (const f of ['index.sqlite', 'lexicon.bin', 'postings.bin']) copyFileSync(join(index, f), join(one, f));
    writeImpacts(one);
    const reference = readFileSync(join(one, IMPACTS_FILE));
    expect(readFileSync(join(index, IMPACTS_FILE))).toEqual(reference);
    for (const threads of [1, 2, 3, 5]) {
      rmSync(join(one, IMPACTS_FILE));
      await writeImpactsParallel(one, threads, undefined, 0);
      expect(readFileSync(join(one, IMPACTS_FILE)), `${threads} threads`).toEqual(reference);
    }
    // Several runs: the merge builds the impacts (on 1 and on 3 merge threads).
    for (const mergeThreads of [1, 3]) {
      const merged = join(dir, `merged-${mergeThreads}`);
      const s = await buildIndex({ input: crawl, output: merged, workers: 1, sorter: 'cpu', blockSize: 5000, mergeThreads });
      expect(s.blocks).toBeGreaterThan(3);
      expect(s.merge.threads).toBe(mergeThreads);
      expect(readFileSync(join(merged, 'postings.bin'))).toEqual(readFileSync(join(index, 'postings.bin')));
      expect(readFileSync(join(merged, IMPACTS_FILE)), `${mergeThreads} merge threads`).toEqual(reference);
    }
  });
});

describe('files past readFileSync\'s 2 GiB', () => {
  it('readWords reads a file in chunks into aligned words, whatever the chunk', async () => {
    const { readWords } = await import('../merge/impacts.js');
    const path = join(mkdtempSync(join(tmpdir(), 'gpuindex-words-')), 'words');
    const data = Buffer.from(Array.from({ length: 4099 }, (_, i) => (i * 7) & 0xff));
    writeFileSync(path, data);
    for (const chunk of [1, 3, 4096, 1 << 20]) {
      const { bytes, words } = readWords(path, chunk);
      expect(bytes.equals(data)).toBe(true);
      expect(words.length).toBe(1024);
      expect(words[1]).toBe(data.readUInt32LE(4));
    }
  });
});
