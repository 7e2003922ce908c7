/**
 * The few protobuf wire-format pieces CIFF needs (proto3: fields equal to their default are
 * omitted). Hand-written because four message types do not justify a code generator.
 */
import { writeVarint } from '../../merge/varint.js';

export class ProtoWriter {
  buf = new Uint8Array(256);
  len = 0;

  private ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + extra) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buf.subarray(0, this.len));
    this.buf = grown;
  }

  reset(): this {
    this.len = 0;
    return this;
  }

  varint(v: number): this {
    this.ensure(10);
    this.len = writeVarint(this.buf, this.len, v);
    return this;
  }

  /** An int32/int64 field (non-negative values only, as CIFF's are). */
  uint(field: number, v: number): this {
    if (v === 0) return this;
    if (v < 0) throw new RangeError(`negative value ${v} in field ${field}`);
    return this.varint(field << 3).varint(v);
  }

  double(field: number, v: number): this {
    if (v === 0) return this;
    this.varint((field << 3) | 1);
    this.ensure(8);
    new DataView(this.buf.buffer, this.buf.byteOffset + this.len, 8).setFloat64(0, v, true);
    this.len += 8;
    return this;
  }

  bytes(field: number, data: Uint8Array): this {
    if (data.length === 0) return this;
    this.varint((field << 3) | 2).varint(data.length);
    this.ensure(data.length);
    this.buf.set(data, this.len);
    this.len += data.length;
    return this;
  }

  string(field: number, s: string): this {
    return this.bytes(field, Buffer.from(s, 'utf8'));
  }

  view(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}

/** Reads one protobuf message's fields: calls onField(field, wireType, value) with value a number or bytes. */
export function readFields(msg: Uint8Array, onField: (field: number, value: number | Uint8Array | ArrayBuffer) => void): void {
  let pos = 0;
  const dv = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
  const varint = (): number => {
    let v = 0;
    let scale = 1;
    for (;;) {
      if (pos >= msg.length) throw new RangeError('truncated varint');
      const b = msg[pos++]!;
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 128;
    }
  };
  while (pos < msg.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 0) onField(field, varint());
    else if (wire === 1) {
      onField(field, dv.getFloat64(pos, true));
      pos += 8;
    } else if (wire === 2) {
      const n = varint();
      if (pos + n > msg.length) throw new RangeError('truncated length-delimited field');
      onField(field, msg.subarray(pos, pos + n));
      pos += n;
    } else throw new RangeError(`unsupported wire type ${wire}`);
  }
}
