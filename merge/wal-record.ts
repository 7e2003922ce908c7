/**
 * One logged operation as bytes: the write-ahead log's records and what the writer's feed thread
 * reads. Each string is its UTF-8 length and bytes, so encoding is a copy per string (JSON.stringify
 * of a batch of documents scans every character for escapes, several times slower) and decoding
 * a slice per string.
 *
 * Layout (little-endian): u8 kind (1 add, 2 replace, 3 delete), f64 seq, u32 count, then per
 * document u8 flags (1 title, 2 fields), id, text, [title], [u32 n, n × (key, value)], or per
 * deleted id the id. A string is u32 byte length and UTF-8; one with a lone surrogate, which
 * UTF-8 cannot hold, is UTF-16 (the length's top bit set), so every string comes back as given.
 */
import type { LoggedOperation } from './write-ahead-log.js';

/** A document as the log holds it (src/shared/options.ts InputDocument, which merge/ cannot import). */
export interface LoggedDocument {
  id: string;
  text: string;
  title?: string;
  fields?: Record<string, string>;
}

const KIND = { add: 1, replace: 2, delete: 3 } as const;
const TITLE = 1;
const FIELDS = 2;
/** No lone surrogate (String.prototype.isWellFormed, Node 20; newer than the compiler's lib). */
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();
/** The top bit of a string's length: its bytes are UTF-16LE. */
const UTF16 = 0x80000000;

export function encodeOperation(op: LoggedOperation): Buffer {
  let size = 1 + 8 + 4;
  const str = (s: string) => 4 + (wellFormed(s) ? Buffer.byteLength(s) : 2 * s.length);
  if (op.op === 'delete') for (const id of op.ids) size += str(id);
  else
    for (const d of op.docs as LoggedDocument[]) {
      size += 1 + str(d.id) + str(d.text);
      if (d.title !== undefined) size += str(d.title);
      if (d.fields !== undefined) {
        size += 4;
        for (const [k, v] of Object.entries(d.fields)) size += str(k) + str(v);
      }
    }
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  const put = (s: string) => {
    const wide = !wellFormed(s);
    const n = out.write(s, at + 4, wide ? 'utf16le' : 'utf8');
    out.writeUInt32LE(wide ? (n | UTF16) >>> 0 : n, at);
    at += 4 + n;
  };
  out[at++] = KIND[op.op];
  out.writeDoubleLE(op.seq, at);
  at += 8;
  if (op.op === 'delete') {
    out.writeUInt32LE(op.ids.length, at);
    at += 4;
    for (const id of op.ids) put(id);
  } else {
    const docs = op.docs as LoggedDocument[];
    out.writeUInt32LE(docs.length, at);
    at += 4;
    for (const d of docs) {
      out[at++] = (d.title !== undefined ? TITLE : 0) | (d.fields !== undefined ? FIELDS : 0);
      put(d.id);
      put(d.text);
      if (d.title !== undefined) put(d.title);
      if (d.fields !== undefined) {
        const entries = Object.entries(d.fields);
        out.writeUInt32LE(entries.length, at);
        at += 4;
        for (const [k, v] of entries) {
          put(k);
          put(v);
        }
      }
    }
  }
  if (at !== size) throw new Error(`wal record: wrote ${at} bytes of ${size}`);
  return out;
}

/** The operation of a record's bytes; throws on bytes that are not one (a damaged record). */
export function decodeOperation(bytes: Uint8Array): LoggedOperation {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const need = (n: number) => {
    if (at + n > b.length) throw new Error('wal record: cut short');
  };
  const u32 = () => {
    need(4);
    const v = b.readUInt32LE(at);
    at += 4;
    return v;
  };
  const get = () => {
    const word = u32();
    const n = word & ~UTF16;
    need(n);
    const s = b.toString(word & UTF16 ? 'utf16le' : 'utf8', at, at + n);
    at += n;
    return s;
  };
  need(9);
  const kind = b[at++]!;
  const seq = b.readDoubleLE(at);
  at += 8;
  const count = u32();
  let op: LoggedOperation;
  if (kind === KIND.delete) {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push(get());
    op = { seq, op: 'delete', ids };
  } else if (kind === KIND.add || kind === KIND.replace) {
    const docs: LoggedDocument[] = [];
    for (let i = 0; i < count; i++) {
      need(1);
      const flags = b[at++]!;
      const d: LoggedDocument = { id: get(), text: get() };
      if (flags & TITLE) d.title = get();
      if (flags & FIELDS) {
        const fields: Record<string, string> = {};
        for (let n = u32(), j = 0; j < n; j++) {
          const k = get();
          // Assigned, a field named __proto__ would set the object's prototype and be lost.
          Object.defineProperty(fields, k, { value: get(), enumerable: true, writable: true, configurable: true });
        }
        d.fields = fields;
      }
      docs.push(d);
    }
    op = { seq, op: kind === KIND.add ? 'add' : 'replace', docs };
  } else throw new Error(`wal record: unknown kind ${kind}`);
  if (at !== b.length) throw new Error('wal record: bytes after the operation');
  return op;
}
