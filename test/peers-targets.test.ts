import { describe, expect, it } from 'vitest';
import { ALL_CORPORA, targetLines } from '../bench/peers.mjs';

const run = (name: string, rows: [string, number | undefined][]) => ({
  corpus: { name },
  results: rows.map(([tool, wallMs]) => (wallMs === undefined ? { tool, error: 'exit 1: boom' } : { tool, wallMs })),
});

describe('the peers bench over several corpora (--corpus all)', () => {
  it('runs the five named corpora, the quick ones first', () => {
    expect(ALL_CORPORA).toEqual(['mail', 'html-docs-small', 'multilingual', 'html-docs', 'synthetic-1GB']);
  });

  it("checks the targets with gpuindex's best row against the target peer", () => {
    const lines = targetLines([
      run('mail', [['gpuindex build --sorter cpu (workers 1)', 880], ['gpuindex build --sorter cpu --workers 2', 980], ['SQLite FTS5 (better-sqlite3)', 750]]),
      run('html-docs', [['gpuindex build --sorter cpu (workers 1)', 32590], ['gpuindex build --sorter cpu --workers 2', 19020], ['Xapian omindex', 93730]]),
      run('synthetic-1GB', [['gpuindex build --sorter cpu (workers 1)', 13550], ['SQLite FTS5 (better-sqlite3)', undefined]]),
      run('multilingual', [['gpuindex build --sorter cpu --workers 2', 3110], ['Xapian omindex', 17970]]),
      run('html-docs-small', [['gpuindex build --sorter cpu (workers 1)', undefined]]),
    ]);
    expect(lines).toEqual([
      '- mail: gpuindex 0.88 s, SQLite FTS5 0.75 s: 0.85x (target 1x: not met)',
      '- html-docs: gpuindex 19.02 s, Xapian omindex 93.73 s: 4.93x (target 1.5x: met)',
      '- synthetic-1GB: gpuindex 13.55 s; SQLite FTS5 did not run',
      '- multilingual: gpuindex 3.11 s (no target)',
      '- html-docs-small: no gpuindex result',
    ]);
  });
});
