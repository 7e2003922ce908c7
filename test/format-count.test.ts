import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCount } from '../src/format-count.js';

describe('formatCount', () => {
  it("prints integers as toLocaleString('en-US') does", () => {
    expect([0, 7, 999, 1000, 6046, 168_202_925, -1_234_567].map(formatCount)).toEqual(['0', '7', '999', '1,000', '6,046', '168,202,925', '-1,234,567']);
    fc.assert(fc.property(fc.maxSafeInteger(), (n) => formatCount(n) === n.toLocaleString('en-US')));
  });
});
