/**
 * The write-ahead log (merge/write-ahead-log.ts) and its records (merge/wal-record.ts): every
 * operation comes back as given (any string, lone surrogates included), a record cut short or
 * damaged by a crash ends the log there and is cut off when a writer reopens it (so what is
 * appended after it is read), and a log of JSON lines of earlier writers is read and rewritten.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeOperation, encodeOperation } from '../merge/wal-record.js';
import { readLog, WAL_FILE, WAL_MAGIC, WriteAheadLog, type LoggedOperation } from '../merge/write-ahead-log.js';

const work = mkdtempSync(join(tmpdir(), 'gpuindex-wal-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const dir = join(work, `w${n++}`);
  mkdirSync(dir);
  return dir;
};

// Full Unicode, and UTF-16 code units alone (lone surrogates).
const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 }), fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)), maxLength: 4 }));
const docArb = fc.record({ id: text, text, title: fc.option(text, { nil: undefined }), fields: fc.option(fc.dictionary(text, text, { maxKeys: 3 }), { nil: undefined }) }).map((d) => {
  const out: Record<string, unknown> = { id: d.id, text: d.text };
  if (d.title !== undefined) out.title = d.title;
  if (d.fields !== undefined) out.fields = d.fields;
  return out;
});
const opArb: fc.Arbitrary<LoggedOperation> = fc.oneof(
  fc.record({ seq: fc.integer({ min: 1, max: 2 ** 40 }), op: fc.constantFrom('add' as const, 'replace' as const), docs: fc.array(docArb, { maxLength: 5 }) }),
  fc.record({ seq: fc.integer({ min: 1, max: 2 ** 40 }), op: fc.constant('delete' as const), ids: fc.array(text, { maxLength: 5 }) }),
);

describe('write-ahead log records', () => {
  it('decode to the operation encoded, strings exact', () => {
    fc.assert(
      fc.property(opArb, (op) => {
        expect(decodeOperation(encodeOperation(op))).toEqual(op);
      }),
      { numRuns: 500 },
    );
  });

  it('keep a field named __proto__ as a field', () => {
    const op: LoggedOperation = { seq: 1, op: 'add', docs: [{ id: 'a', text: 'b', fields: JSON.parse('{"__proto__": "x", "title": "y"}') }] };
    const back = decodeOperation(encodeOperation(op));
    expect(back).toEqual(op);
    expect(Object.getOwnPropertyNames((back as { docs: { fields: object }[] }).docs[0]!.fields)).toEqual(['__proto__', 'title']);
  });

  it('refuse bytes cut short or run on', () => {
    const record = encodeOperation({ seq: 3, op: 'add', docs: [{ id: 'a', text: 'white whale' }] });
    expect(() => decodeOperation(record.subarray(0, record.length - 1))).toThrow(/cut short/);
    expect(() => decodeOperation(Buffer.concat([record, Buffer.from([0])]))).toThrow(/after the operation/);
  });
});

describe('the log', () => {
  it('reads back what was appended; a torn or damaged record ends it and is cut off at reopen, so later appends are read', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 6 }), fc.nat(), fc.boolean(), fc.array(opArb, { maxLength: 3 }), async (ops, cutAt, damage, later) => {
        const dir = fresh();
        ops.forEach((op, i) => (op.seq = i + 1));
        const log = new WriteAheadLog(dir);
        for (const op of ops) await log.append(op);
        log.close();
        expect(readLog(dir, 0)).toEqual(ops);
        expect(readLog(dir, 1)).toEqual(ops.slice(1));
        // The last record torn (cut inside it) or one of its bytes changed: it was never acknowledged.
        const path = join(dir, WAL_FILE);
        const size = readFileSync(path).length;
        const last = encodeOperation(ops[ops.length - 1]!).length + 8;
        if (damage) {
          const bytes = readFileSync(path);
          const at = size - last + (cutAt % last);
          bytes[at] = bytes[at]! ^ 0x5a;
          writeFileSync(path, bytes);
        } else truncateSync(path, size - last + (cutAt % last));
        expect(readLog(dir, 0)).toEqual(ops.slice(0, -1));
        const reopened = new WriteAheadLog(dir);
        later.forEach((op, i) => (op.seq = ops.length + i));
        for (const op of later) await reopened.append(op);
        reopened.close();
        expect(readLog(dir, 0)).toEqual([...ops.slice(0, -1), ...later]);
      }),
      { numRuns: 60 },
    );
  });

  it('reads a log of JSON lines (earlier writers) and rewrites it as records when opened', async () => {
    const dir = fresh();
    const ops: LoggedOperation[] = [
      { seq: 1, op: 'add', docs: [{ id: 'a', text: 'white whale' }] },
      { seq: 2, op: 'delete', ids: ['a'] },
    ];
    // The last line torn by a crash.
    writeFileSync(join(dir, WAL_FILE), ops.map((o) => JSON.stringify(o) + '\n').join('') + '{"seq":3,"op":"add","do');
    expect(readLog(dir, 0)).toEqual(ops);
    const log = new WriteAheadLog(dir);
    expect(readFileSync(join(dir, WAL_FILE)).subarray(0, WAL_MAGIC.length)).toEqual(WAL_MAGIC);
    const third: LoggedOperation = { seq: 3, op: 'replace', docs: [{ id: 'b', text: 'sea', title: 'Ahab' }] };
    await log.append(third);
    log.truncate();
    expect(readLog(dir, 0)).toEqual([]);
    await log.append(third);
    log.close();
    expect(readLog(dir, 0)).toEqual([third]);
  });
});
