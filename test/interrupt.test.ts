import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'gpuindex-int-'));
const crawl = join(work, 'crawl');
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Wall time of one complete build of the crawl: signals are sent at fractions of it. */
let fullBuildMs = 0;

/** About 25 MB of JSONL in 32 files, indexed with small blocks: long enough to interrupt. */
beforeAll(() => {
  mkdirSync(crawl);
  const words = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);
  for (let f = 0; f < 32; f++) {
    const lines: string[] = [];
    for (let d = 0; d < 1000; d++) lines.push(JSON.stringify({ id: `${f}-${d}`, text: Array.from({ length: 160 }, (_, w) => words[(f * 7919 + d * 104729 + w * w * 31) % words.length]).join(' ') }));
    writeFileSync(join(crawl, `part-${f}.jsonl`), lines.join('\n') + '\n');
  }
  const out = join(work, 'timing-run');
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [cli, 'build', crawl, '-o', out, ...BUILD_FLAGS], { encoding: 'utf8' });
  fullBuildMs = performance.now() - t0;
  if (r.status !== 0) throw new Error(r.stderr);
  rmSync(out, { recursive: true });
});

const BUILD_FLAGS = ['--sorter', 'cpu', '--block-size', '20000', '--workers', '1', '-q'];

function run(output: string, signal: NodeJS.Signals, afterMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, 'build', crawl, '-o', output, ...BUILD_FLAGS], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill(signal), afterMs);
    child.on('exit', (code, sig) => {
      clearTimeout(timer);
      resolve({ code, signal: sig, stderr });
    });
  });
}

const leftovers = (parent: string) => readdirSync(parent).filter((n) => n.includes('.gpuindex-tmp-'));

describe('interruption', () => {
  it('SIGINT and SIGTERM stop the build cleanly: exit 130/143, no output, no temporary folder', async () => {
    let interrupted = 0;
    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
      const parent = join(work, `out-${signal}`);
      mkdirSync(parent);
      const r = await run(join(parent, 'index'), signal, fullBuildMs * 0.5);
      if (r.code === 0) continue; // finished before the signal: nothing to check
      interrupted++;
      expect(r.code).toBe(code);
      expect(r.stderr).toBe(`gpuindex: interrupted (${signal}); nothing was written to ${join(parent, 'index')}\n`);
      expect(readdirSync(parent)).toEqual([]);
    }
    expect(interrupted).toBeGreaterThan(0); // the crawl is large enough to be caught mid-build
  });

  it('kill -9 at random points never leaves a broken index at the output, and the next build succeeds and clears the leftovers', async () => {
    const parent = join(work, 'out-kill');
    mkdirSync(parent);
    const output = join(parent, 'index');
    let killed = 0;
    for (const fraction of [0.3, 0.45, 0.6, 0.75, 0.9]) {
      const r = await run(output, 'SIGKILL', fullBuildMs * fraction * (0.9 + 0.2 * Math.random()));
      if (r.code === 0) {
        rmSync(output, { recursive: true }); // it finished first: a complete index, fine
        continue;
      }
      killed++;
      expect(r.signal).toBe('SIGKILL');
      if (existsSync(output)) {
        // Killed after the final rename (while exiting): the output must then be complete.
        expect(spawnSync(process.execPath, [cli, 'verify', output], { encoding: 'utf8' }).status).toBe(0);
        rmSync(output, { recursive: true });
      }
    }
    expect(killed).toBeGreaterThanOrEqual(2);
    expect(leftovers(parent).length).toBeGreaterThan(0); // what SIGKILL leaves: a temporary sibling, never the output
    const ok = spawnSync(process.execPath, [cli, 'build', crawl, '-o', output, '--sorter', 'cpu', '-q'], { encoding: 'utf8' });
    expect(ok.status).toBe(0);
    expect(readdirSync(output).sort()).toEqual(['MANIFEST.json', 'index.sqlite', 'postings.bin']);
    expect(leftovers(parent)).toEqual([]);
    expect(spawnSync(process.execPath, [cli, 'verify', output], { encoding: 'utf8' }).status).toBe(0);
  });
});
