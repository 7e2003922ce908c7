// The CLI's first line starts Node with glibc's trim threshold (docs/API.md, Memory): the file
// runs as a program, and a script with the same first line sees the variable.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VERSION } from '../src/version.js';

const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'gpuindex-first-line-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the CLI run as a program', () => {
  it('starts through its first line', () => {
    expect(execFileSync(cli, ['--version'], { encoding: 'utf8' }).trim()).toContain(VERSION);
  });

  it('gives Node MALLOC_TRIM_THRESHOLD_=1048576', () => {
    const firstLine = readFileSync(cli, 'utf8').split('\n', 1)[0]!;
    const probe = join(dir, 'probe.mjs');
    writeFileSync(probe, `${firstLine}\nprocess.stdout.write(String(process.env.MALLOC_TRIM_THRESHOLD_));\n`);
    chmodSync(probe, 0o755);
    const env = { ...process.env };
    delete env.MALLOC_TRIM_THRESHOLD_;
    expect(execFileSync(probe, { encoding: 'utf8', env })).toBe('1048576');
  });
});
