import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StringIds } from '../runtime/string-ids.js';

describe('StringIds (strings -> dense ids, the strings the caller\'s)', () => {
  it('numbers strings as a Map numbering them on first sight would, and finds them (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.string({ maxLength: 3, unit: 'grapheme' }), fc.constantFrom('', 'a', 'é', '\u{1F600}', 'A')), { maxLength: 3000 }), (words) => {
        const keys: string[] = [];
        const ids = new StringIds(keys);
        const reference = new Map<string, number>();
        for (const w of words) {
          const expected = reference.get(w) ?? reference.size;
          reference.set(w, expected);
          const id = ids.idOf(w);
          if (id === keys.length) keys.push(w);
          expect(id).toBe(expected);
        }
        expect(ids.size).toBe(reference.size);
        for (const [w, id] of reference) expect(ids.find(w)).toBe(id);
        expect(ids.find('\u0000absent')).toBe(reference.has('\u0000absent') ? reference.get('\u0000absent') : -1);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps every id through many doublings', () => {
    const keys: string[] = [];
    const ids = new StringIds(keys);
    for (let i = 0; i < 200_000; i++) {
      const w = `t${(i * 2654435761) >>> 0}`;
      expect(ids.idOf(w)).toBe(i);
      keys.push(w);
    }
    for (let i = 0; i < 200_000; i += 997) expect(ids.find(keys[i]!)).toBe(i);
    expect(ids.idOf(keys[12345]!)).toBe(12345);
    expect(ids.size).toBe(200_000);
  });
});
