import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex } from '../src/build.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-bad-lines-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('bad input: one line per fault', () => {
  it('a binary .jsonl file is skipped once, as binary, not also as an empty file', async () => {
    const crawl = join(work, 'binary');
    mkdirSync(crawl);
    writeFileSync(join(crawl, 'b.jsonl'), '{"id":"a","text":"x"}\n\0\0\0\n');
    writeFileSync(join(crawl, 'ok.txt'), 'a plain document');
    const warnings: string[] = [];
    const summary = await buildIndex({ input: crawl, output: join(work, 'binary-idx'), sorter: 'cpu', workers: 1, onWarning: (m) => warnings.push(m) });
    expect(summary.skipped.items).toEqual([{ path: 'b.jsonl', reason: 'binary file' }]);
    expect(summary.skipped.count).toBe(1);
    expect(warnings.filter((w) => w.includes('b.jsonl'))).toEqual(['skipped b.jsonl: binary file']);
  });

  it('a skip line stays one line without terminal escapes, whatever the file name or the line holds', async () => {
    const crawl = join(work, 'names');
    mkdirSync(crawl);
    writeFileSync(join(crawl, 'a\nb.txt'), '');
    writeFileSync(join(crawl, 'c\x1b[31mred.jsonl'), '{bad\n"\x1b[2J\r"\n');
    writeFileSync(join(crawl, 'd\x07.p\nng'), 'x');
    writeFileSync(join(crawl, 'ok.txt'), 'a plain document');
    const warnings: string[] = [];
    const summary = await buildIndex({ input: crawl, output: join(work, 'names-idx'), sorter: 'cpu', workers: 1, onWarning: (m) => warnings.push(m) });
    expect(summary.skipped.count).toBe(3);
    expect(warnings.length).toBeGreaterThanOrEqual(4);
    // eslint-disable-next-line no-control-regex
    for (const w of warnings) expect(w).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(warnings).toContain('skipped a\\nb.txt: empty file');
  });

  it.skipIf(process.platform !== 'linux')('a file name that is not valid UTF-8 is named as such, not "cannot read (ENOENT)"', async () => {
    const crawl = join(work, 'utf8');
    mkdirSync(crawl);
    writeFileSync(Buffer.from(join(crawl, '\xff.txt'), 'latin1'), 'bad name');
    writeFileSync(join(crawl, 'ok.txt'), 'a plain document');
    const summary = await buildIndex({ input: crawl, output: join(work, 'utf8-idx'), sorter: 'cpu', workers: 1 });
    expect(summary.skipped.count).toBe(1);
    expect(summary.skipped.items[0]!.reason).toMatch(/not valid UTF-8/);
    expect(summary.documents).toBe(1);
  });
});
