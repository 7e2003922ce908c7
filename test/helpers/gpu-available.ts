/**
 * Whether a WebGPU adapter exists, probed once in a child process (so a missing or broken
 * driver cannot take the test worker down). With GPUINDEX_REQUIRE_GPU=1 (CI) a missing adapter
 * is an error, never a skip; elsewhere GPU tests skip with a visible message.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

let cached: boolean | undefined;

export function hasGpu(): boolean {
  if (cached !== undefined) return cached;
  const script = "import { create } from 'webgpu'; const g = create([]); const a = await g.requestAdapter(); process.stdout.write(a ? 'yes' : 'no'); process.exit(0);";
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('../..', import.meta.url)), encoding: 'utf8', timeout: 60_000 });
  cached = r.stdout === 'yes';
  if (!cached) {
    if (process.env.GPUINDEX_REQUIRE_GPU === '1') throw new Error(`GPUINDEX_REQUIRE_GPU=1 but no WebGPU adapter was found (${(r.stderr || r.error?.message || '').trim().split('\n').pop()})`);
    console.warn('gpuindex tests: no WebGPU adapter found; GPU tests are skipped');
  }
  return cached;
}
