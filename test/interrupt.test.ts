import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

function run(output: string, signal: NodeJS.Signals, afterMs: number, afterTemp = false): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, 'build', crawl, '-o', output, ...BUILD_FLAGS], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    let timer: NodeJS.Timeout | undefined;
    let poll: NodeJS.Timeout | undefined;
    if (afterTemp) {
      // Count the delay from the moment the temporary sibling exists, so that the kill lands
      // mid-build whatever the machine's load (wall-clock fractions alone were flaky under CI).
      const parent = dirname(output);
      poll = setInterval(() => {
        if (leftovers(parent).length === 0) return;
        clearInterval(poll);
        timer = setTimeout(() => child.kill(signal), afterMs);
      }, 2);
    } else timer = setTimeout(() => child.kill(signal), afterMs);
    child.on('exit', (code, sig) => {
      clearTimeout(timer);
      clearInterval(poll);
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
      const r = await run(join(parent, 'index'), signal, fullBuildMs * 0.2, true);
      if (r.code === 0) continue; // finished before the signal: nothing to check
      interrupted++;
      expect(r.code).toBe(code);
      expect(r.stderr).toBe(`gpuindex: interrupted (${signal}); nothing was written to ${join(parent, 'index')}\n`);
      expect(readdirSync(parent)).toEqual([]);
    }
    expect(interrupted).toBeGreaterThan(0); // the crawl is large enough to be caught mid-build
  });

  it('a build of more than 16 workers runs in a child with a pool thread a core: signals to the parent alone or to both stop it cleanly, so does a kill -9 of the parent, and the index is the same', async () => {
    const flags = ['--sorter', 'cpu', '--block-size', '20000', '--memory', '2GiB', '-q'];
    const base = join(work, 'pool-1');
    expect(spawnSync(process.execPath, [cli, 'build', crawl, '-o', base, ...flags, '--workers', '1']).status).toBe(0);
    const wide = join(work, 'pool-17');
    expect(spawnSync(process.execPath, [cli, 'build', crawl, '-o', wide, ...flags, '--workers', '17']).status).toBe(0);
    for (const f of ['postings.bin', 'lexicon.bin']) expect(readFileSync(join(wide, f)).equals(readFileSync(join(base, f)))).toBe(true);
    const interrupted: string[] = [];
    // To the parent alone (passed on), or to both: the builder first, then the parent (passing it on again).
    for (const [signal, code, both] of [['SIGINT', 130, false], ['SIGTERM', 143, false], ['SIGINT', 130, true], ['SIGTERM', 143, true]] as const) {
      const parent = join(work, `pool-out-${signal}-${both}`);
      mkdirSync(parent);
      const output = join(parent, 'index');
      const child = spawn(process.execPath, [cli, 'build', crawl, '-o', output, ...flags, '--workers', '17'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      // Once the temporary folder exists, the build runs in the child: its command line has the pool size.
      while (leftovers(parent).length === 0 && child.exitCode === null) await new Promise((r) => setTimeout(r, 5));
      const builder = spawnSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).stdout.trim();
      const exit = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
      if (builder !== '') {
        expect(readFileSync(`/proc/${builder}/cmdline`, 'utf8').split('\0')).toContain('--v8-pool-size=0');
        if (both) {
          process.kill(Number(builder), signal);
          await new Promise((r) => setTimeout(r, 20));
        }
        child.kill(signal);
      }
      const r = await exit;
      if (r === 0) continue; // finished before the signal
      interrupted.push(`${signal} ${both ? 'both' : 'parent'}`);
      expect(r).toBe(code);
      expect(stderr).toBe(`gpuindex: interrupted (${signal}); nothing was written to ${output}\n`);
      expect(readdirSync(parent)).toEqual([]);
    }
    expect(interrupted.some((c) => c.endsWith('parent')) && interrupted.some((c) => c.endsWith('both'))).toBe(true);
    // The parent killed outright: the build stops as on SIGTERM, leaving nothing.
    const parent = join(work, 'pool-out-kill');
    mkdirSync(parent);
    const child = spawn(process.execPath, [cli, 'build', crawl, '-o', join(parent, 'index'), ...flags, '--workers', '17'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let childStderr = '';
    child.stderr.on('data', (d) => (childStderr += d));
    while (leftovers(parent).length === 0 && child.exitCode === null) await new Promise((r) => setTimeout(r, 5));
    const builder = Number(spawnSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).stdout.trim());
    expect(builder).toBeGreaterThan(0);
    child.kill('SIGKILL');
    const alive = (): boolean => {
      try {
        process.kill(builder, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let waited = 0; alive() && waited < 30_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    expect(alive()).toBe(false);
    expect(readdirSync(parent)).toEqual([]);
    expect(childStderr).toContain('interrupted (SIGTERM)');
    // Given a pool size, or GPUINDEX_V8_POOL=default, the build stays in the process.
    const { widePoolWanted } = await import('../src/cli-v8-pool.js');
    expect(widePoolWanted(17, [], {})).toBe(true);
    expect(widePoolWanted(16, [], {})).toBe(false);
    expect(widePoolWanted(32, ['--v8-pool-size=4'], {})).toBe(false);
    expect(widePoolWanted(32, [], { NODE_OPTIONS: '--max-old-space-size=4096 --v8-pool-size=8' })).toBe(false);
    expect(widePoolWanted(32, [], { GPUINDEX_V8_POOL: 'default' })).toBe(false);
  });

  it('kill -9 at random points never leaves a broken index at the output, and the next build succeeds and clears the leftovers', async () => {
    const parent = join(work, 'out-kill');
    mkdirSync(parent);
    const output = join(parent, 'index');
    // First a kill as soon as the temporary folder exists: certainly mid-build, so it must leave
    // that folder (and only that) behind.
    const first = await run(output, 'SIGKILL', 0, true);
    expect(first.signal).toBe('SIGKILL');
    expect(existsSync(output)).toBe(false);
    expect(leftovers(parent).length).toBe(1);
    // Then kills at random points of the build (each new build first clears the dead builds'
    // leftovers); a kill may land after the final rename, and the output must then be complete.
    for (const fraction of [0.1, 0.3, 0.5, 0.7, 0.9, 1.1]) {
      const r = await run(output, 'SIGKILL', fullBuildMs * fraction * (0.8 + 0.4 * Math.random()), true);
      if (r.code !== 0) expect(r.signal).toBe('SIGKILL');
      if (existsSync(output)) {
        expect(spawnSync(process.execPath, [cli, 'verify', output], { encoding: 'utf8' }).status).toBe(0);
        rmSync(output, { recursive: true });
      }
    }
    const ok = spawnSync(process.execPath, [cli, 'build', crawl, '-o', output, '--sorter', 'cpu', '-q'], { encoding: 'utf8' });
    expect(ok.status).toBe(0);
    expect(readdirSync(output).sort()).toEqual(['MANIFEST.json', 'impacts.bin', 'index.sqlite', 'lexicon.bin', 'postings.bin']);
    expect(leftovers(parent)).toEqual([]);
    expect(spawnSync(process.execPath, [cli, 'verify', output], { encoding: 'utf8' }).status).toBe(0);
  });
});
