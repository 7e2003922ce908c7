/**
 * CIFF export never loses a file: an existing output is refused unless forced (CLI `--force`,
 * exportCiff's `force`), and the output path holds either what was there before or a complete
 * export, never a part of one (the export is written beside it and renamed into place).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';
import { exportCiff } from '../src/ciff/ciff.js';
import { openIndex, type IndexReader } from '../src/reader.js';
import { UserError } from '../src/shared/errors.js';
import { readCiff } from './helpers/ciff-reader.js';

const cli = new URL('../dist/src/cli.js', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'gpuindex-ciff-export-'));
const index = join(work, 'index');
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(async () => {
  const docs = [
    { id: 'a', title: 'White whale', text: 'the white whale swims' },
    { id: 'b', text: 'a black cat sleeps' },
  ];
  await buildIndex({ input: docs, output: index, sorter: 'cpu' });
});

function gpuindex(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, GPUINDEX_DEBUG: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A folder of its own for each case, holding `name` with `content` when given. */
function folderWith(name: string, content?: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(work, 'out-'));
  const file = join(dir, name);
  if (content !== undefined) writeFileSync(file, content);
  return { dir, file };
}

function withReader<T>(f: (reader: IndexReader) => T): T {
  const reader = openIndex(index);
  try {
    return f(reader);
  } finally {
    reader.close();
  }
}

describe('gpuindex export onto an existing file', () => {
  it('refuses without --force in one line naming the file, exit 1, and leaves the file as it was', () => {
    const { dir, file } = folderWith('index.ciff', 'keep me');
    const r = gpuindex('export', index, '-o', file);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`gpuindex: output already exists: ${file} (use --force to replace it)\n`);
    expect(readFileSync(file, 'utf8')).toBe('keep me');
    expect(readdirSync(dir)).toEqual(['index.ciff']);
  });

  it('replaces it with --force, and the new file is a complete export', () => {
    const { dir, file } = folderWith('index.ciff', 'old');
    const r = gpuindex('export', index, '-o', file, '--force');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readCiff(file).header.numDocs).toBe(2);
    expect(readdirSync(dir)).toEqual(['index.ciff']);
  });

  it('refuses a folder at the output path, even with --force', () => {
    const { file } = folderWith('a-folder');
    mkdirSync(file);
    for (const args of [[], ['--force']]) {
      const r = gpuindex('export', index, '-o', file, ...args);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(file);
      expect(readdirSync(file)).toEqual([]);
    }
  });

  it('writes a new file without --force', () => {
    const { file } = folderWith('new.ciff');
    expect(gpuindex('export', index, '-o', file).code).toBe(0);
    expect(readCiff(file).header.numDocs).toBe(2);
  });
});

describe('exportCiff (the library function behind export)', () => {
  it('refuses an existing output with a UserError unless force is given', () => {
    const { file } = folderWith('x.ciff', 'keep me');
    withReader((reader) => {
      expect(() => exportCiff(reader, file, 'x')).toThrow(new UserError(`output already exists: ${file} (use --force to replace it)`));
      expect(readFileSync(file, 'utf8')).toBe('keep me');
      expect(exportCiff(reader, file, 'x', { force: true }).docRecords).toBe(2);
    });
    expect(readCiff(file).header.numDocs).toBe(2);
  });

  it('an export that fails part way leaves the file that was there, and no temporary file', () => {
    const { dir, file } = folderWith('x.ciff', 'keep me');
    withReader((reader) => {
      // The second postings list fails to read: the export has written part of the file by then.
      let lists = 0;
      const failing = Object.create(reader) as IndexReader;
      failing.readList = (e) => {
        if (++lists === 2) throw new Error('read failed');
        return reader.readList(e);
      };
      expect(() => exportCiff(failing, file, 'x', { force: true })).toThrow('read failed');
    });
    expect(readFileSync(file, 'utf8')).toBe('keep me');
    expect(readdirSync(dir)).toEqual(['x.ciff']);
  });

  it('a temporary file left by an export that was killed is removed by the next export beside it', () => {
    const { dir, file } = folderWith('x.ciff');
    // The temporary file of a process that no longer runs (pid 2^22 + 1 is above Linux's pid_max).
    const stale = join(dir, `.x.ciff.gpuindex-tmp-${2 ** 22 + 1}-0000`);
    writeFileSync(stale, 'half an export');
    withReader((reader) => exportCiff(reader, file, 'x'));
    expect(existsSync(stale)).toBe(false);
    expect(readdirSync(dir)).toEqual(['x.ciff']);
  });
});
