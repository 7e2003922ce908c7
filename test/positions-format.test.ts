import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { PositionsFile, PositionsFileWriter, PositionsPartWriter, riceParameter } from '../merge/positions-file.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-posfmt-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let serial = 0;

/** A term's postings: docID, tf and positions (ascending; title positions weigh titleWeight in tf). */
type Posting = { docId: number; tf: number; positions: number[] };

/** Random documents (title length, bound) and terms whose postings hold positions below, and sometimes far past, their bound. */
const collection = fc
  .record({
    titleWeight: fc.integer({ min: 1, max: 3 }),
    docs: fc.array(fc.record({ title: fc.integer({ min: 0, max: 4 }), end: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 2 ** 31 })) }), { minLength: 1, maxLength: 12 }),
  })
  .chain(({ titleWeight, docs }) => {
    // A posting: distinct positions, mostly below the document's bound; some anywhere below 2^32 (a bad bound costs bits only).
    const posting = (d: number) =>
      fc
        .uniqueArray(fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: Math.max(0, docs[d]!.end - 1) }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 ** 32 - 1 }) }), { minLength: 1, maxLength: 30 })
        .map((ps) => {
          const positions = ps.sort((a, b) => a - b);
          const tf = positions.reduce((w, p) => w + (p < docs[d]!.title ? titleWeight : 1), 0);
          return { docId: d, tf, positions };
        });
    const list = fc.uniqueArray(fc.integer({ min: 0, max: docs.length - 1 }), { maxLength: docs.length }).chain((ds) => (ds.length ? fc.tuple(...[...ds].sort((a, b) => a - b).map(posting)) : fc.constant([] as Posting[])));
    return fc.record({ titleWeight: fc.constant(titleWeight), docs: fc.constant(docs), terms: fc.array(list, { minLength: 1, maxLength: 8 }) });
  });

function readBack(path: string, terms: readonly Posting[][]): number[][][] {
  const file = new PositionsFile(path);
  try {
    return terms.map((list, t) => {
      const cursor = file.cursor(t, { docIds: Uint32Array.from(list, (p) => p.docId), tfs: Uint32Array.from(list, (p) => p.tf) });
      const got = list.map((_, i) => Array.from(cursor.positionsOf(i)));
      expect(cursor.atEnd).toBe(true);
      return got;
    });
  } finally {
    file.close();
  }
}

describe('positions.bin format 3 (Rice codes)', () => {
  it('reads back every posting\'s positions as written, escapes and long low bits included', () => {
    fc.assert(
      fc.property(collection, ({ titleWeight, docs, terms }) => {
        const docsOf = { titleLengths: Uint32Array.from(docs, (d) => d.title), ends: Uint32Array.from(docs, (d) => d.end), titleWeight };
        const whole = join(work, `whole-${serial++}.bin`);
        const w = new PositionsFileWriter(whole, terms.length, docsOf);
        terms.forEach((list, t) => {
          if (list.length === 0) return;
          w.beginTerm(t);
          for (const p of list) w.addPosting(p.docId, p.tf, Uint32Array.from(p.positions), 0, p.positions.length);
        });
        w.close();
        const want = terms.map((list) => list.map((p) => p.positions));
        expect(readBack(whole, terms)).toEqual(want);
        const file = new PositionsFile(whole);
        expect(file.format).toBe(3);
        file.close();
      }),
      { numRuns: 300 },
    );
  });

  it('parts appended at their offsets give the bytes of one writer', () => {
    fc.assert(
      fc.property(collection, fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 3 }), ({ titleWeight, docs, terms }, cuts) => {
        const docsOf = { titleLengths: Uint32Array.from(docs, (d) => d.title), ends: Uint32Array.from(docs, (d) => d.end), titleWeight };
        const write = (w: { beginTerm(t: number): void; addPosting(d: number, tf: number, p: Uint32Array, from: number, n: number): void }, from: number, to: number) => {
          for (let t = from; t < to; t++) {
            if (terms[t]!.length === 0) continue;
            w.beginTerm(t);
            for (const p of terms[t]!) w.addPosting(p.docId, p.tf, Uint32Array.from(p.positions), 0, p.positions.length);
          }
        };
        const whole = join(work, `whole-${serial++}.bin`);
        const one = new PositionsFileWriter(whole, terms.length, docsOf);
        write(one, 0, terms.length);
        one.close();
        const bounds = [0, ...[...new Set(cuts.map((c) => Math.min(c, terms.length)))].sort((a, b) => a - b).filter((c) => c > 0 && c < terms.length), terms.length];
        const joined = join(work, `joined-${serial++}.bin`);
        const out = new PositionsFileWriter(joined, terms.length, docsOf);
        for (let i = 0; i + 1 < bounds.length; i++) {
          const partPath = join(work, `part-${serial++}`);
          const part = new PositionsPartWriter(partPath, docsOf.ends);
          write(part, bounds[i]!, bounds[i + 1]!);
          out.appendPart(partPath, part.close());
        }
        out.close();
        expect(Buffer.compare(readFileSync(joined), readFileSync(whole))).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it('the Rice parameter is ⌊log2 ⌊E / tf⌋⌋, 0 below 2', () => {
    expect([riceParameter(1, 1), riceParameter(3, 2), riceParameter(4, 2), riceParameter(7, 1), riceParameter(8, 1), riceParameter(2 ** 32 - 1, 1), riceParameter(450, 20)]).toEqual([0, 0, 1, 2, 3, 31, 4]);
  });

  it('a damaged file is refused in one line: a cut footer, a term longer than the data', () => {
    const path = join(work, `d-${serial++}.bin`);
    const w = new PositionsFileWriter(path, 2, { titleLengths: Uint32Array.of(0), ends: Uint32Array.of(10), titleWeight: 1 });
    w.beginTerm(1);
    w.addPosting(0, 2, Uint32Array.of(3, 7), 0, 2);
    w.close();
    const bytes = readFileSync(path);
    const cut = join(work, `d-${serial++}.bin`);
    writeFileSync(cut, bytes.subarray(0, bytes.length - 3));
    expect(() => new PositionsFile(cut)).toThrow(/^.*: its terms' table starts at \d+, outside/);
    const long = Buffer.from(bytes);
    // The table: term 0's length (0), term 1's; term 1 said to be 100 bytes long.
    long[long.length - 9] = 100;
    const longPath = join(work, `d-${serial++}.bin`);
    writeFileSync(longPath, long);
    expect(() => new PositionsFile(longPath)).toThrow(/: term 2's positions start at \d+, outside \d+\.\.\d+/);
  });
});

describe('positions.bin format 2 (varints) is still read', () => {
  /** Format 2 by hand: header, D × u32 title lengths, varint positions, (T + 1) × u64 starts. */
  function writeV2(path: string, titleLengths: number[], titleWeight: number, terms: readonly Posting[][]): void {
    const head = Buffer.alloc(24);
    head.write('GPIXPOS2', 0, 'latin1');
    head.writeUInt32LE(titleLengths.length, 8);
    head.writeUInt32LE(terms.length, 12);
    head.writeUInt32LE(titleWeight, 16);
    const chunks: Buffer[] = [head, Buffer.from(Uint32Array.from(titleLengths).buffer)];
    let offset = 24 + 4 * titleLengths.length;
    const starts: number[] = [];
    for (const list of terms) {
      starts.push(offset);
      const bytes: number[] = [];
      for (const p of list) {
        let last = 0;
        for (const x of p.positions) {
          let v = x - last;
          last = x;
          while (v >= 0x80) {
            bytes.push((v & 0x7f) | 0x80);
            v = Math.floor(v / 128);
          }
          bytes.push(v);
        }
      }
      chunks.push(Buffer.from(bytes));
      offset += bytes.length;
    }
    starts.push(offset);
    const table = Buffer.alloc(8 * starts.length);
    starts.forEach((s, i) => table.writeBigUInt64LE(BigInt(s), 8 * i));
    chunks.push(table);
    writeFileSync(path, Buffer.concat(chunks));
  }

  it('every posting\'s positions as the varint writer put them', () => {
    fc.assert(
      fc.property(collection, ({ titleWeight, docs, terms }) => {
        const path = join(work, `v2-${serial++}.bin`);
        writeV2(path, docs.map((d) => d.title), titleWeight, terms);
        const file = new PositionsFile(path);
        expect(file.format).toBe(2);
        file.close();
        expect(readBack(path, terms)).toEqual(terms.map((list) => list.map((p) => p.positions)));
      }),
      { numRuns: 100 },
    );
  });
});
