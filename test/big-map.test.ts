/**
 * BigMap: a Map past V8's 2^24 entries, as a chain of Maps. Checked against a plain Map with
 * small chain limits, and through whole builds whose dictionaries cross the limit
 * (GPUINDEX_MAP_LIMIT lowers it; the 2^24-term build itself is in bench/big-vocabulary.mjs).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { BigMap } from '../runtime/big-map.js';
import { buildIndex } from '../src/build.js';
import { verifyIndex } from '../merge/verify.js';
import { readIndexContent } from './helpers/index-files.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-big-map-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('BigMap', () => {
  it('answers get, has, set, delete and size as a Map does, whatever the limit per Map', () => {
    const op = fc.oneof(
      fc.tuple(fc.constant('set' as const), fc.integer({ min: 0, max: 30 }), fc.integer()),
      fc.tuple(fc.constant('delete' as const), fc.integer({ min: 0, max: 30 }), fc.constant(0)),
      fc.tuple(fc.constant('clear' as const), fc.constant(0), fc.constant(0)),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(op, { maxLength: 120 }), (limit, ops) => {
        const big = new BigMap<string, number>(limit);
        const ref = new Map<string, number>();
        for (const [kind, k, v] of ops) {
          const key = `k${k}`;
          if (kind === 'set') {
            big.set(key, v);
            ref.set(key, v);
          } else if (kind === 'delete') expect(big.delete(key)).toBe(ref.delete(key));
          else {
            big.clear();
            ref.clear();
          }
          expect(big.size).toBe(ref.size);
          for (let q = 0; q <= 30; q++) {
            expect(big.get(`k${q}`)).toBe(ref.get(`k${q}`));
            expect(big.has(`k${q}`)).toBe(ref.has(`k${q}`));
          }
        }
        expect(new Map(big.entries())).toEqual(ref);
      }),
      { numRuns: 300 },
    );
  });
});

describe('builds whose dictionaries pass the entries of one Map', () => {
  it('give the index of a build that stays within one, with 1 and 2 workers', async () => {
    const crawl = join(dir, 'crawl');
    mkdirSync(crawl);
    // 6,000 distinct terms (and Unicode ones, for the inverter's Map), several blocks.
    const lines = Array.from({ length: 60 }, (_, d) => JSON.stringify({ id: `d${d}`, text: Array.from({ length: 100 }, (_, k) => `w${(d * 100 + k).toString(36)}7 é${d % 7}x common`).join(' ') }));
    writeFileSync(join(crawl, 'a.jsonl'), lines.join('\n') + '\n');
    const plain = join(dir, 'plain');
    await buildIndex({ input: crawl, output: plain, workers: 1, sorter: 'cpu', blockSize: 4000 });
    const previous = process.env.GPUINDEX_MAP_LIMIT;
    process.env.GPUINDEX_MAP_LIMIT = '1000';
    try {
      for (const workers of [1, 2]) {
        const out = join(dir, `chained-${workers}`);
        const s = await buildIndex({ input: crawl, output: out, workers, sorter: 'cpu', blockSize: 4000 });
        expect(s.terms).toBeGreaterThan(6000);
        expect(readIndexContent(out)).toEqual(readIndexContent(plain));
        expect(readFileSync(join(out, 'postings.bin'))).toEqual(readFileSync(join(plain, 'postings.bin')));
        verifyIndex(out);
      }
    } finally {
      if (previous === undefined) delete process.env.GPUINDEX_MAP_LIMIT;
      else process.env.GPUINDEX_MAP_LIMIT = previous;
    }
  });
});
