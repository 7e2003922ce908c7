import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { RawInflater } from '../indexer/corpus/raw-inflater.js';

/** What inflateRawSync gives for `input`: the bytes and the input it took, or the error code it throws. */
function reference(input: Buffer, maxOutput: number): { bytes: Buffer; consumed: number } | { code: string } {
  try {
    const r = inflateRawSync(input, { info: true, maxOutputLength: maxOutput }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    return { bytes: r.buffer, consumed: r.engine.bytesWritten };
  } catch (err) {
    return { code: (err as NodeJS.ErrnoException).code ?? 'none' };
  }
}

function viaInflater(inflater: RawInflater, input: Buffer, maxOutput: number): { bytes: Buffer; consumed: number } | { code: string } {
  try {
    const r = inflater.inflate(input, maxOutput);
    return { bytes: r.buffer, consumed: r.consumed };
  } catch (err) {
    return { code: (err as NodeJS.ErrnoException).code ?? 'none' };
  }
}

/** Text-like bytes: compressible, as pages are. */
const payload = fc.array(fc.constantFrom(...'abc de<html>\n\u00e9\u4e2d'.split('')), { maxLength: 3000 }).map((cs) => Buffer.from(cs.join('')));

describe('RawInflater (one node:zlib engine reused across members)', () => {
  it('gives inflateRawSync\'s bytes, input taken and error codes, member after member, whatever precedes', () => {
    const inflater = new RawInflater();
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            data: payload,
            level: fc.integer({ min: 0, max: 9 }),
            trailing: fc.uint8Array({ maxLength: 40 }),
            // cut: the member ends early; flip: one byte changed; none: intact
            damage: fc.oneof(fc.constant({ kind: 'none' as const }), fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }), fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) })),
            maxOutput: fc.oneof(fc.constant(1 << 24), fc.integer({ min: 1, max: 4000 })),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        (members) => {
          for (const m of members) {
            let member = Buffer.concat([deflateRawSync(m.data, { level: m.level }), Buffer.from(m.trailing)]);
            if (m.damage.kind === 'cut') member = member.subarray(0, m.damage.at % (member.length + 1));
            if (m.damage.kind === 'flip' && member.length > 0) {
              member = Buffer.from(member);
              member[m.damage.at % member.length]! ^= m.damage.xor;
            }
            expect(viaInflater(inflater, member, m.maxOutput)).toEqual(reference(member, m.maxOutput));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('inflates a member larger than its first output buffer, and one whose output fills it exactly', () => {
    const inflater = new RawInflater();
    for (const size of [256 * 1024, 256 * 1024 + 1, 3 * 1024 * 1024 + 17]) {
      const data = Buffer.alloc(size);
      for (let i = 0; i < size; i++) data[i] = (i * 7919) % 251;
      const member = Buffer.concat([deflateRawSync(data), Buffer.from('WARC/1.1 next')]);
      const r = inflater.inflate(member, 1 << 24);
      expect(r.buffer.equals(data)).toBe(true);
      expect(r.consumed).toBe(member.length - 'WARC/1.1 next'.length);
    }
  });

  it('does not keep a large member\'s output buffer for the next member', () => {
    const inflater = new RawInflater();
    const big = inflater.inflate(deflateRawSync(Buffer.alloc(16 << 20, 'a')), 1 << 26).buffer;
    expect(big.buffer.byteLength).toBeGreaterThanOrEqual(16 << 20);
    const small = inflater.inflate(deflateRawSync(Buffer.from('small record')), 1000).buffer;
    expect(small.toString()).toBe('small record');
    expect(small.buffer.byteLength).toBeLessThan(1 << 20);
    // The large member's bytes were not written over by the next one's.
    expect(big.subarray(0, 12).toString()).toBe('aaaaaaaaaaaa');
  });

  it('hands out views of its buffer, valid until the next member; a member kept is not overwritten', () => {
    const inflater = new RawInflater();
    const a = inflater.inflate(deflateRawSync(Buffer.from('first record')), 1000).buffer;
    inflater.inflate(deflateRawSync(Buffer.from('SECOND, longer record')), 1000);
    expect(a.toString()).toBe('SECOND, long');
    const b = inflater.inflate(deflateRawSync(Buffer.from('third record')), 1000).buffer;
    inflater.keep();
    inflater.inflate(deflateRawSync(Buffer.from('FOURTH, longer record')), 1000);
    expect(b.toString()).toBe('third record');
  });
});
