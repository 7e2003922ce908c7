import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BufferPool } from '../runtime/buffer-pool.js';

describe('BufferPool', () => {
  it('hands out the smallest free buffer that is large enough, never one in use, and keeps at most `keep`', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.record({ take: fc.integer({ min: 1, max: 64 }) }), fc.record({ give: fc.nat(8) })), { maxLength: 60 }), fc.integer({ min: 1, max: 4 }), (steps, keep) => {
        const pool = new BufferPool(keep);
        const inUse: ArrayBuffer[] = [];
        const free: ArrayBuffer[] = [];
        for (const step of steps) {
          if ('take' in step) {
            const fitting = free.filter((b) => b.byteLength >= step.take).sort((a, b) => a.byteLength - b.byteLength);
            const b = pool.take(step.take);
            expect(b.byteLength).toBeGreaterThanOrEqual(step.take);
            expect(inUse).not.toContain(b);
            if (fitting.length > 0) {
              expect(b.byteLength).toBe(fitting[0]!.byteLength);
              expect(free).toContain(b);
              free.splice(free.indexOf(b), 1);
            } else expect(free).not.toContain(b);
            inUse.push(b);
          } else if (inUse.length > 0) {
            const b = inUse.splice(step.give % inUse.length, 1)[0]!;
            pool.give(b);
            free.push(b);
            // The pool keeps the largest `keep`: the model drops the same ones.
            if (free.length > keep) free.sort((x, y) => y.byteLength - x.byteLength).length = keep;
          }
        }
      }),
    );
  });
});
