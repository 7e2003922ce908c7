import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CpuSorter } from '../indexer/cpu-sorter.js';
import { RunSink } from '../indexer/run-sink.js';
import { StageClock } from '../indexer/stage-clock.js';

function randomBlock(count: number, seed: number): Uint32Array {
  const pairs = new Uint32Array(2 * count);
  let x = seed;
  for (let i = 0; i < pairs.length; i += 2) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    pairs[i] = x % 997;
    pairs[i + 1] = i / 2;
  }
  return pairs;
}

async function writeRuns(writeBehind: boolean, dir: string): Promise<RunSink> {
  const sink = new RunSink(new CpuSorter(), dir, new StageClock(), undefined, false, writeBehind);
  // Blocks of different sizes: the write-behind buffer is reused and grown.
  for (const [count, seed] of [[5000, 1], [20000, 2], [3000, 3]] as const) await sink.sortAndWrite(randomBlock(count, seed), count);
  await sink.drain();
  return sink;
}

describe('RunSink writing runs behind the sort', () => {
  it('writes the same run files, and counts the same bytes, as writing them in the sort stage', async () => {
    const a = mkdtempSync(join(tmpdir(), 'gpuindex-sink-'));
    const b = mkdtempSync(join(tmpdir(), 'gpuindex-sink-'));
    try {
      const inStage = await writeRuns(false, a);
      const behind = await writeRuns(true, b);
      expect(behind.runBytes).toBe(inStage.runBytes);
      expect(readdirSync(b).sort()).toEqual(readdirSync(a).sort());
      for (const f of readdirSync(a)) expect(readFileSync(join(b, f)).equals(readFileSync(join(a, f)))).toBe(true);
    } finally {
      rmSync(a, { recursive: true, force: true });
      rmSync(b, { recursive: true, force: true });
    }
  });

  it('reports a failed write from drain() and from the next block', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpuindex-sink-'));
    const sink = new RunSink(new CpuSorter(), join(dir, 'missing'), new StageClock(), undefined, false, true);
    await sink.sortAndWrite(randomBlock(100, 1), 100);
    await expect(sink.drain()).rejects.toThrow(/ENOENT/);
    await expect(sink.sortAndWrite(randomBlock(100, 2), 100)).rejects.toThrow(/ENOENT/);
    rmSync(dir, { recursive: true, force: true });
  });
});
