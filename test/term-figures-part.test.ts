/**
 * A merge thread's figures part (merge/term-figures-part.ts) reads back every row it was given,
 * in order, cf past 2^32 included, across its write and read chunks; a file cut inside a row is
 * refused with its path.
 */
import { mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { readTermFigures, TermFiguresWriter } from '../merge/term-figures-part.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-figures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const row = fc.tuple(fc.nat({ max: 2 ** 32 - 1 }), fc.nat({ max: 2 ** 32 - 1 }), fc.integer({ min: 1, max: 2 ** 52 }), fc.nat({ max: 2 ** 32 - 1 }));

function roundTrip(rows: [number, number, number, number][]): [number, number, number, number][] {
  const path = join(dir, `f${n++}`);
  const w = new TermFiguresWriter(path);
  for (const [t, df, cf, len] of rows) w.add(t, df, cf, len);
  w.close();
  expect(w.count).toBe(rows.length);
  const back: [number, number, number, number][] = [];
  expect(readTermFigures(path, (t, df, cf, len) => back.push([t, df, cf, len]))).toBe(rows.length);
  return back;
}

describe('a merge thread\'s term figures', () => {
  it('read back as written (fuzzed)', () => {
    fc.assert(fc.property(fc.array(row, { maxLength: 50 }), (rows) => {
      expect(roundTrip(rows)).toEqual(rows);
    }), { numRuns: 100 });
  });

  it('read back across chunks (more rows than a write or read holds)', () => {
    const rows = Array.from({ length: 40_000 }, (_, i) => [i, i % 7, 2 ** 33 + i, i * 3] as [number, number, number, number]);
    expect(roundTrip(rows)).toEqual(rows);
  });

  it('refuses a file cut inside a row, naming it', () => {
    const path = join(dir, 'cut');
    const w = new TermFiguresWriter(path);
    w.add(1, 2, 3, 4);
    w.add(5, 6, 7, 8);
    w.close();
    truncateSync(path, 30);
    expect(() => readTermFigures(path, () => {})).toThrow(/cut.*inside a row/);
  });
});
