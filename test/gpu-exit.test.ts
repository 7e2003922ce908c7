import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { hasGpu } from './helpers/gpu-available.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gpuindex-gpu-exit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Dawn's abort when a thread ends with a pipeline still being created. */
const PENDING = /Promise not resolved or rejected/;

describe.runIf(hasGpu())('a process that ends while the GPU kernels compile in the background', () => {
  it('a sorter closed at once after it opened: the process ends normally, or with process.exit once closed() settles', () => {
    const script = join(dir, 'open-close.mjs');
    writeFileSync(
      script,
      `const m = await import(${JSON.stringify(join(repo, 'dist/indexer/sort/sorters.js'))});
const { sorter } = await m.chooseSorter('gpu', process.argv[2]);
sorter.dispose();
if (process.argv[3] === 'exit') { await sorter.closed(); process.exit(1); }
`,
    );
    for (const algorithm of ['bsn', 'auto'])
      for (const how of ['natural', 'exit']) {
        const r = spawnSync(process.execPath, [script, algorithm, how], { encoding: 'utf8', timeout: 60_000 });
        expect({ algorithm, how, status: r.status, pending: PENDING.test(r.stderr) }).toEqual({ algorithm, how, status: how === 'exit' ? 1 : 0, pending: false });
      }
  });

  it('the CLI: a build refused right after the GPU opened exits with its one-line message and code 1', () => {
    const r = spawnSync(process.execPath, [join(repo, 'dist/src/cli.js'), 'build', join(repo, 'corpus-samples/moby-dick'), '-o', join(dir, 'index'), '--sorter', 'gpu', '--memory', '1MiB'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^gpuindex: --memory 1 MiB is too small for this build/m);
    expect(r.stderr).not.toMatch(PENDING);
  });
});
