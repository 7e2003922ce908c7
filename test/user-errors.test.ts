import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex, openIndex, UserError } from 'gpuindex';

const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'gpuindex-user-errors-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function gpuindex(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, GPUINDEX_DEBUG: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function crawl(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'd.jsonl'), '{"id":"a","title":"White whale","text":"the white whale swims"}\n{"id":"b","text":"a black cat"}\n');
  return dir;
}

describe('user errors: one line, the documented exit code, nothing written or lost', () => {
  it('build -o <the crawl> --force (or a folder holding the crawl) is refused and leaves the crawl alone', async () => {
    const dir = crawl('self');
    const r = gpuindex('build', dir, '-o', dir, '--force', '--sorter', 'cpu');
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^gpuindex: .*crawl/);
    expect(readdirSync(dir)).toEqual(['d.jsonl']);
    const inner = crawl('outer/inner');
    const up = gpuindex('build', inner, '-o', join(work, 'outer'), '--force', '--sorter', 'cpu');
    expect(up.code).toBe(1);
    expect(readdirSync(inner)).toEqual(['d.jsonl']);
    await expect(buildIndex({ input: dir, output: dir, force: true, sorter: 'cpu' })).rejects.toThrow(UserError);
    expect(readdirSync(dir)).toEqual(['d.jsonl']);
  });

  it('--fields with an empty list is one line, exit 1, not an internal error; the library throws a UserError', async () => {
    const dir = crawl('fields');
    const out = join(work, 'fields-out');
    const r = gpuindex('build', dir, '-o', out, '--fields', 'text=,', '--sorter', 'cpu');
    expect(r.stderr).not.toMatch(/internal error|\n {4}at /);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/--fields/);
    expect(r.code).toBe(1);
    expect(existsSync(out)).toBe(false);
    for (const fields of [{ text: [] }, { text: 'body' }, { foo: ['x'] }, 'text=body'])
      await expect(buildIndex({ input: dir, output: out, sorter: 'cpu', fields: fields as never })).rejects.toThrow(UserError);
    expect(existsSync(out)).toBe(false);
  });

  it('search --k1 and --b that are not numbers are refused (no NaN scores)', () => {
    const dir = crawl('bm25');
    const index = join(work, 'bm25-index');
    expect(gpuindex('build', dir, '-o', index, '--sorter', 'cpu', '-q').code).toBe(0);
    for (const args of [['--k1', 'abc'], ['--b', 'abc'], ['--k1', ''], ['--b', '0.4x']]) {
      const r = gpuindex('search', index, 'whale', '--json', ...args);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    const reader = openIndex(index);
    try {
      expect(() => reader.search('whale', { k1: Number.NaN })).toThrow(UserError);
      expect(() => reader.search('whale', { b: Number.NaN })).toThrow(UserError);
      expect(reader.search('whale', { k1: 1.2, b: 0.75 })[0]!.score).toBeGreaterThan(0);
    } finally {
      reader.close();
    }
  });

  it('verify on a path that does not exist is a user error (exit 1), not index damage (exit 3)', () => {
    const r = gpuindex('verify', join(work, 'nothere'));
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('the library refuses memory: Infinity and an unknown memoryScope', async () => {
    const dir = crawl('memory');
    const out = join(work, 'memory-out');
    await expect(buildIndex({ input: dir, output: out, sorter: 'cpu', memory: Number.POSITIVE_INFINITY })).rejects.toThrow(UserError);
    await expect(buildIndex({ input: dir, output: out, sorter: 'cpu', memoryScope: 'xx' as never })).rejects.toThrow(/memoryScope/);
    expect(existsSync(out)).toBe(false);
  });
});
