import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasGpu } from './helpers/gpu-available.js';

const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'gpuindex-dawn-stderr-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const env = { ...process.env, GPUINDEX_DEBUG: '' };
const DAWN_LINE = /^Warning: max\w+ artificially reduced/m;
let n = 0;

/** The CLI with its stderr on a file opened with `flag` ('a': appending; 'w': written in place). */
function withStderrFile(flag: 'a' | 'w', args: string[], extraEnv: Record<string, string> = {}) {
  const file = join(work, `stderr-${n++}.txt`);
  const fd = openSync(file, flag);
  try {
    const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', fd] });
    return { code: r.status, stdout: r.stdout, stderr: readFileSync(file, 'utf8') };
  } finally {
    closeSync(fd);
  }
}

/** The CLI with its stderr on a pipe (a shell pipeline), which gives back what came through. */
function withStderrPipe(args: string[]) {
  const r = spawnSync('sh', ['-c', '"$0" "$@" 2>&1 >/dev/null | cat', process.execPath, cli, ...args], { encoding: 'utf8', env });
  return { code: r.status, stderr: r.stdout };
}

/** The CLI on a pseudo-terminal (util-linux `script`), stdout and stderr together; undefined without `script`. */
function onTerminal(args: string[]) {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const r = spawnSync('script', ['-qec', [process.execPath, cli, ...args].map(quote).join(' '), '/dev/null'], { encoding: 'utf8', env });
  if (r.error) return undefined;
  return { code: r.status, output: r.stdout };
}

describe('captureStderr', () => {
  const mod = new URL('../dist/runtime/native-stderr.js', import.meta.url).href;
  const script = `
    import { writeSync } from 'node:fs';
    import { Worker } from 'node:worker_threads';
    import { captureStderr } from '${mod}';
    writeSync(2, 'before\\n');
    const r = captureStderr(() => { writeSync(2, 'Warning: inside\\n'); return 7; });
    writeSync(2, 'after\\n');
    // A worker thread that did not say its fds are untracked leaves fd 2 alone.
    const w = new Worker(\`import { captureStderr } from '${mod}'; import { writeSync } from 'node:fs'; import { parentPort } from 'node:worker_threads';
      parentPort.postMessage(captureStderr(() => writeSync(2, 'from the worker\\\\n')).text ?? 'not captured');\`, { eval: true });
    w.once('message', (m) => { process.stdout.write(JSON.stringify({ ...r, worker: m })); w.terminate(); });
  `;
  const run = (stderr: number | 'pipe') => spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', stderr] });

  it('takes what fd 2 gets during the call and puts fd 2 back (a file opened for appending)', () => {
    const file = join(work, 'capture.txt');
    const fd = openSync(file, 'a');
    const r = run(fd);
    closeSync(fd);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ value: 7, text: 'Warning: inside\n', worker: 'not captured' });
    expect(readFileSync(file, 'utf8')).toBe('before\nafter\nfrom the worker\n');
  });

  it('leaves a socket (a Node parent\'s pipe) as it is: nothing captured, nothing lost', () => {
    const r = run('pipe');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ value: 7, worker: 'not captured' });
    expect(r.stderr).toBe('before\nWarning: inside\nafter\nfrom the worker\n');
  });
});

describe.runIf(hasGpu())("Dawn's notices stay off the terminal", () => {
  it('gpu-info: none on a terminal, a pipe or a file opened for appending; gpu-info --json keeps them', () => {
    // What Dawn prints, seen where fd 2 cannot be moved (a file written in place).
    const plain = withStderrFile('w', ['gpu-info']);
    expect(plain.code).toBe(0);
    const printed = plain.stderr.split('\n').filter((l) => DAWN_LINE.test(l));

    const appended = withStderrFile('a', ['gpu-info']);
    expect(appended.code).toBe(0);
    expect(appended.stdout).toMatch(/^adapter: /);
    expect(appended.stderr).not.toMatch(DAWN_LINE);
    expect(appended.stderr).toBe('');

    const piped = withStderrPipe(['gpu-info']);
    expect(piped.code).toBe(0);
    expect(piped.stderr).not.toMatch(DAWN_LINE);

    const tty = onTerminal(['gpu-info']);
    if (tty) {
      expect(tty.code).toBe(0);
      expect(tty.output).toMatch(/adapter: /);
      expect(tty.output).not.toMatch(DAWN_LINE);
    }

    // Kept, not lost: the same lines in gpu-info --json, and on stderr with GPUINDEX_DEBUG.
    const json = withStderrFile('a', ['gpu-info', '--json']);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout).dawnMessages).toEqual(printed);
    const debug = withStderrFile('a', ['gpu-info'], { GPUINDEX_DEBUG: '1' });
    expect(debug.stderr).toBe(printed.map((l) => `gpuindex: Dawn: ${l}\n`).join(''));
  });

  it('a build with --sorter gpu (the GPU thread opens the device) prints none, and the index is the CPU build\'s', () => {
    const gpuOut = join(work, 'gpu-index');
    const cpuOut = join(work, 'cpu-index');
    const gpu = withStderrFile('a', ['build', 'corpus-samples/moby-dick', '-o', gpuOut, '--sorter', 'gpu', '--block-size', '50000']);
    expect(gpu.code).toBe(0);
    expect(gpu.stderr).not.toMatch(DAWN_LINE);
    expect(gpu.stderr).toBe('');
    const piped = withStderrPipe(['build', 'corpus-samples/moby-dick', '-o', gpuOut, '--force', '--sorter', 'gpu', '--block-size', '50000']);
    expect(piped.code).toBe(0);
    expect(piped.stderr).not.toMatch(DAWN_LINE);
    expect(withStderrFile('a', ['build', 'corpus-samples/moby-dick', '-o', cpuOut, '--sorter', 'cpu', '-q']).code).toBe(0);
    expect(readFileSync(join(gpuOut, 'postings.bin')).equals(readFileSync(join(cpuOut, 'postings.bin')))).toBe(true);
  });
});
