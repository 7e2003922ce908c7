import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildIndex } from '../src/index.js';
import { batchArrayBytes, CREDITS, HASH_THREAD_BYTES, LEXICON_SHARE, MAIN_HEAP_BYTES, MERGE_WORKER_BYTES, PARSE_WORKER_BYTES, planMemory, planMerge, SLACK_SHARE } from '../indexer/plan/memory-plan.js';
import { UserError } from '../src/shared/errors.js';
import { estimateDictionaryBytes, stringBytes } from '../indexer/plan/dictionary-bytes.js';

const MiB = 2 ** 20;
const base = { baselineBytes: 60 * MiB, workers: 2, workersExplicit: true, hostBlocks: 2 as const, sorterBytesPerPair: 8 };

/** Everything the plan counts, as planMemory documents it. */
function planned(p: ReturnType<typeof planMemory>): number {
  return p.baselineBytes + p.workerBytes + p.mainHeapBytes + p.lexiconBytes + p.blockBytes + p.inflightBytes + p.aheadBytes;
}

describe('planMemory splits --memory', () => {
  it('leaves the merge room for host blocks in SharedArrayBuffers (they may still be resident), not for ordinary ones', () => {
    const budgetBytes = 1024 * MiB;
    const ordinary = planMemory({ ...base, budgetBytes });
    const shared = planMemory({ ...base, budgetBytes, sharedBlocks: true });
    expect(shared.blockPairs).toBe(ordinary.blockPairs);
    expect(ordinary.mergeBytes).toBe(budgetBytes - ordinary.baselineBytes - ordinary.mainHeapBytes);
    expect(shared.mergeBytes).toBe(ordinary.mergeBytes - 2 * 8 * shared.blockPairs);
    const oneBlock = planMemory({ ...base, budgetBytes, hostBlocks: 1, sharedBlocks: true });
    expect(oneBlock.mergeBytes).toBe(budgetBytes - oneBlock.baselineBytes - oneBlock.mainHeapBytes - 8 * oneBlock.blockPairs);
  });

  it('fills the budget with the largest block: its parts add up to at most the budget, one more block quantum would not fit', () => {
    for (const mib of [256, 384, 1024, 4096]) {
      const p = planMemory({ ...base, budgetBytes: mib * MiB });
      expect(planned(p)).toBeLessThanOrEqual(mib * MiB);
      expect(p.blockBytes).toBe(p.blockPairs * (2 * 8 + 8));
      expect(p.mainHeapBytes).toBe(MAIN_HEAP_BYTES + Math.ceil(SLACK_SHARE * mib * MiB));
      expect(p.inflightBytes).toBe(2 * CREDITS * batchArrayBytes(p.batchPairs));
      if (p.blockPairs < (1 << 28) - (1 << 16))
        expect(() => planMemory({ ...base, budgetBytes: mib * MiB, blockSize: p.blockPairs + (1 << 16) })).toThrow(/use --block-size/);
    }
  });

  it("gives workers with lexicons of their own a share for them, out of the blocks', and none to a shared dictionary", () => {
    const budgetBytes = 4096 * MiB;
    const noShare = planMemory({ ...base, workers: 8, budgetBytes });
    const own = planMemory({ ...base, workers: 8, budgetBytes, ownLexiconsFrom: 4 });
    const fewer = planMemory({ ...base, workers: 3, budgetBytes, ownLexiconsFrom: 4 });
    expect(noShare.lexiconBytes).toBe(0);
    expect(fewer.lexiconBytes).toBe(0);
    const held = own.baselineBytes + own.mainHeapBytes + own.workerBytes;
    expect(own.lexiconBytes).toBe(Math.floor(LEXICON_SHARE * (budgetBytes - held)));
    expect(own.blockPairs).toBeLessThan(noShare.blockPairs);
    expect(planned(own)).toBeLessThanOrEqual(budgetBytes);
    expect(planned(noShare)).toBeLessThanOrEqual(budgetBytes);
    // An explicit block size: the lexicons take what it leaves.
    const explicit = planMemory({ ...base, workers: 8, budgetBytes, ownLexiconsFrom: 4, blockSize: 1 << 20 });
    expect(planned(explicit)).toBe(budgetBytes);
    expect(explicit.lexiconBytes).toBeGreaterThan(own.lexiconBytes);
  });

  it('refuses a budget the process and workers already exceed, naming the minimum and its parts', () => {
    expect(() => planMemory({ ...base, budgetBytes: 32 * MiB })).toThrow(UserError);
    expect(() => planMemory({ ...base, budgetBytes: 32 * MiB })).toThrow(
      /^--memory 32 MiB is too small for this build: it needs at least \d+ MiB \(process 60 MiB, 2 parse worker\(s\) × 56 MiB, main heap 41 MiB, blocks and queues \d+ MiB\)$/,
    );
  });

  it('refuses an explicit block size that does not fit, naming the largest that does (which is then accepted)', () => {
    let message = '';
    try {
      planMemory({ ...base, budgetBytes: 300 * MiB, blockSize: 100_000_000 });
    } catch (e) {
      message = (e as Error).message;
    }
    const m = /^--block-size 100000000 needs \d+ MiB for blocks, sort buffers and queues, but --memory 300 MiB leaves \d+ MiB after .*; use --block-size (\d+) or less, or --memory \d+ MiB or more$/.exec(message);
    expect(m, message).not.toBeNull();
    const fits = Number(m![1]);
    expect(planMemory({ ...base, budgetBytes: 300 * MiB, blockSize: fits }).blockPairs).toBe(fits);
    expect(() => planMemory({ ...base, budgetBytes: 300 * MiB, blockSize: fits + 1 })).toThrow(/use --block-size/);
  });

  it('lowers a default worker count to fit, with a notice, and keeps an explicit one', () => {
    const lowered = planMemory({ ...base, workers: 15, workersExplicit: false, budgetBytes: 512 * MiB });
    expect(lowered.workers).toBeLessThan(15);
    expect(lowered.workers * PARSE_WORKER_BYTES).toBeLessThanOrEqual(0.75 * (512 * MiB - lowered.baselineBytes - lowered.mainHeapBytes));
    expect(lowered.workersLowered).toBe(`--memory 512 MiB affords ${lowered.workers} parse worker(s) of 56 MiB each (not 15); raise --memory for more`);
    const kept = planMemory({ ...base, workers: 4, workersExplicit: true, budgetBytes: 512 * MiB });
    expect(kept.workers).toBe(4);
    expect(kept.workersLowered).toBeUndefined();
    expect(planned(kept)).toBeLessThanOrEqual(512 * MiB);
  });

  it('a sequential single-block plan holds no spare block and no out-of-order batches with one worker', () => {
    const p = planMemory({ ...base, workers: 1, hostBlocks: 1, sorterBytesPerPair: 8, budgetBytes: 256 * MiB });
    expect(p.blockBytes).toBe(p.blockPairs * 16);
    expect(p.aheadBytes).toBe(0);
  });
});

describe('planMerge', () => {
  it('lowers default merge threads so their isolates take at most half the merge memory; keeps an explicit count', () => {
    expect(planMerge(100 * MiB, 8, false)).toEqual({ threads: 1, cursorBytes: 100 * MiB }); // 2 threads + the hash thread: 64 MiB > half
    expect(planMerge(200 * MiB, 8, false)).toEqual({ threads: 3, cursorBytes: 200 * MiB - 3 * MERGE_WORKER_BYTES - HASH_THREAD_BYTES });
    expect(planMerge(100 * MiB, 8, true)).toEqual({ threads: 8, cursorBytes: 0 });
    expect(planMerge(300 * MiB, 2, true)).toEqual({ threads: 2, cursorBytes: 300 * MiB - 2 * MERGE_WORKER_BYTES - HASH_THREAD_BYTES });
    expect(planMerge(100 * MiB, 1, false)).toEqual({ threads: 1, cursorBytes: 100 * MiB });
    expect(planMerge(10 * MiB, 4, false)).toEqual({ threads: 1, cursorBytes: 10 * MiB });
  });
});

describe('the build keeps to the plan and reports it', () => {
  const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;

  it('gpuindex build names the minimum when --memory cannot hold the build, and leaves no output', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'gpuindex-mem-')), 'idx');
    const r = spawnSync(process.execPath, [cli, 'build', 'corpus-samples', '-o', out, '--memory', '32MiB', '--sorter', 'cpu'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^gpuindex: --memory 32 MiB is too small for this build: it needs at least \d+ MiB \(process \d+ MiB, \d+ parse worker\(s\) × 56 MiB, main heap \d+ MiB, blocks and queues \d+ MiB\)\n$/);
    expect(existsSync(out)).toBe(false);
  });

  it("a library build leaves the caller's RSS out of the budget and sizes blocks from the rest", async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'gpuindex-mem-')), 'idx');
    const s = await buildIndex({ input: 'corpus-samples', output: out, sorter: 'cpu', workers: 1, memory: '256MiB' });
    const m = s.memory;
    expect(m.budgetBytes).toBe(256 * MiB);
    expect(m.hostBytes).toBeGreaterThan(0);
    expect(m.workingSetBytes).toBe(m.peakRssBytes - m.dictionaryBytes - m.hostBytes);
    expect(m.blockPairs).toBe(s.blockSize);
    expect(m.dictionaryBytes).toBeGreaterThan(0);
  });
});

describe('estimateDictionaryBytes', () => {
  const documents = { externalIds: ['d1', 'd2'], paths: ['a.jsonl', 'a.jsonl'] };
  const terms = ['alpha', 'beta', 'gamma'];

  it("counts a worker's WebAssembly table bytes in place of its raw-token strings and cache slots", () => {
    const js = estimateDictionaryBytes(terms, documents, [3, 2]);
    const wasm = estimateDictionaryBytes(terms, documents, [3, 2], [1_000_000, 0]);
    // Worker 0: its 3 terms lose a raw-token string and 33 bytes of cache slots each; its table comes in.
    const averageString = terms.reduce((s, t) => s + stringBytes(t), 0) / terms.length;
    expect(wasm - js).toBeCloseTo(1_000_000 - 3 * (averageString + 33), 6);
    expect(estimateDictionaryBytes(terms, documents, [3, 2], [0, 0])).toBe(js);
  });

  it('measures up to 8,192 term strings exactly and estimates more from an even sample', () => {
    const none = { externalIds: [], paths: [] };
    const exact = (ts: string[]) => ts.reduce((s, t) => s + stringBytes(t) + 55, 0);
    // Lengths 1..40 in turn, one in 7 a two-byte string: the sample must see both kinds.
    const make = (n: number) => Array.from({ length: n }, (_, i) => (i % 7 === 0 ? 'ж' : 'w').repeat(1 + (i % 40)));
    const small = make(8192);
    expect(estimateDictionaryBytes(small, none)).toBe(exact(small));
    const large = make(200_000);
    const estimate = estimateDictionaryBytes(large, none);
    expect(estimate).not.toBe(exact(large));
    expect(Math.abs(estimate - exact(large)) / exact(large)).toBeLessThan(0.01);
  });
});
