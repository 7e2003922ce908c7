import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeRuns } from '../merge/heap-merge.js';
import { decodePostings, encodePostings, maxEncodedBytes } from '../merge/postings-codec.js';
import { RunCursor, writeRunFile } from '../merge/runs.js';
import { readVarint, writeVarint } from '../merge/varint.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-merge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

function run(pairs: [number, number][]): string {
  const path = join(dir, `run-${n++}.bin`);
  writeRunFile(path, new Uint32Array(pairs.flat()), pairs.length);
  return path;
}

function mergeAll(paths: string[], chunkPairs = 2) {
  const lists: [number, [number, number][]][] = [];
  const counters = mergeRuns(paths, chunkPairs, (t, d, tf, df) => lists.push([t, Array.from(d.subarray(0, df), (x, i) => [x, tf[i]!])]));
  return { lists, counters };
}

describe('varints', () => {
  it('round-trip values up to 2^53', () => {
    const buf = new Uint8Array(10);
    for (const v of [0, 1, 127, 128, 300, 2 ** 21, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1]) {
      const end = writeVarint(buf, 0, v);
      expect(readVarint(buf, 0)).toEqual([v, end]);
    }
  });
  it('refuse a truncated varint', () => {
    expect(() => readVarint(new Uint8Array([0x80, 0x80]), 0)).toThrow(/past the end/);
  });
});

describe('postings codec', () => {
  it('round-trips docID gaps and tfs', () => {
    const docIds = new Uint32Array([0, 1, 5, 1000, 2 ** 32 - 1]);
    const tfs = new Uint32Array([1, 2, 300, 1, 7]);
    const out = new Uint8Array(maxEncodedBytes(5));
    const len = encodePostings(docIds, tfs, 5, out, 0);
    expect(decodePostings(out.subarray(0, len), 5)).toEqual({ docIds, tfs });
  });
  it('refuses trailing bytes', () => {
    expect(() => decodePostings(new Uint8Array([1, 1, 9]), 1)).toThrow(/1 trailing bytes/);
  });
});

describe('run files', () => {
  it('read back pair by pair through small chunks', () => {
    const pairs: [number, number][] = [[0, 0], [0, 3], [1, 1], [2 ** 32 - 1, 2 ** 32 - 1]];
    const c = new RunCursor(run(pairs), 3);
    const seen: [number, number][] = [];
    while (!c.done) {
      seen.push([c.termId, c.docId]);
      c.advance();
    }
    expect(seen).toEqual(pairs);
  });
  it('refuse a file that is not a run', () => {
    const p = join(dir, 'junk.bin');
    writeFileSync(p, 'hello world, not a run');
    expect(() => new RunCursor(p, 4)).toThrow(/not a gpuindex run file/);
  });
});

describe('heap merge', () => {
  it('merges runs in (termID, docID) order, counting duplicates as tf', () => {
    const a = run([[0, 0], [0, 0], [1, 0], [2, 1], [2, 1], [2, 1]]);
    const b = run([[0, 2], [1, 2], [1, 3], [3, 3]]);
    const c = run([[2, 4], [3, 4], [3, 4]]);
    const { lists, counters } = mergeAll([a, b, c]);
    expect(lists).toEqual([
      [0, [[0, 2], [2, 1]]],
      [1, [[0, 1], [2, 1], [3, 1]]],
      [2, [[1, 3], [4, 1]]],
      [3, [[3, 1], [4, 2]]],
    ]);
    expect(counters).toMatchObject({ runs: 3, pairs: 13, terms: 4 });
    // One pop per (run, term) segment, not one per pair.
    expect(counters.segmentPops).toBe(3 + 3 + 2);
  });
  it('adds the counts of a document split across two runs', () => {
    const a = run([[5, 7], [5, 7], [6, 7]]);
    const b = run([[5, 7], [6, 7], [6, 8]]);
    expect(mergeAll([a, b]).lists).toEqual([
      [5, [[7, 3]]],
      [6, [[7, 2], [8, 1]]],
    ]);
  });
  it('handles empty runs and no runs', () => {
    expect(mergeAll([]).lists).toEqual([]);
    expect(mergeAll([run([]), run([[1, 1]])]).lists).toEqual([[1, [[1, 1]]]]);
  });
});
