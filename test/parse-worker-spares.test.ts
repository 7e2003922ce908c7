import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { workerYoungGenerationMb } from '../indexer/plan/memory-plan.js';
import { endSpareWorkers, prestartParseWorkers, spareWorkerCount, takeSpareWorker } from '../indexer/parse/parse-worker-spares.js';
import { buildIndex } from '../src/build.js';
import { readIndexContent } from './helpers/index-files.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-spares-'));
afterAll(async () => {
  await endSpareWorkers();
  rmSync(work, { recursive: true, force: true });
});

describe('parse workers started ahead of the build (the CLI starts them as it loads)', () => {
  it('are taken by the build, give the same index, and the ones left over are ended', async () => {
    const plain = join(work, 'plain');
    await buildIndex({ input: 'corpus-samples', output: plain, sorter: 'cpu', workers: 2 });
    prestartParseWorkers(3, workerYoungGenerationMb());
    expect(spareWorkerCount()).toBe(3);
    const ahead = join(work, 'ahead');
    const summary = await buildIndex({ input: 'corpus-samples', output: ahead, sorter: 'cpu', workers: 2 });
    expect(summary.workers).toBe(2);
    // Two were taken; the third was ended with the build.
    expect(spareWorkerCount()).toBe(0);
    expect(readIndexContent(ahead)).toEqual(readIndexContent(plain));
  });

  it('are only taken with the young-generation limit they were started with', async () => {
    prestartParseWorkers(1, 8);
    expect(takeSpareWorker(16)).toBeUndefined();
    const w = takeSpareWorker(8);
    expect(w).toBeDefined();
    await w!.terminate();
    expect(spareWorkerCount()).toBe(0);
  });
});
