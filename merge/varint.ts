/** LEB128 unsigned varints (7 bits a byte, high bit = more), as in protobuf and CIFF. */

/** Writes `value` (< 2^53) at out[pos..]; returns the new position. out must have room (10 bytes). */
export function writeVarint(out: Uint8Array, pos: number, value: number): number {
  while (value >= 0x80) {
    out[pos++] = (value & 0x7f) | 0x80;
    value = Math.floor(value / 128);
  }
  out[pos++] = value;
  return pos;
}

/**
 * writeVarint for a value below 2^32 (docID gaps, tfs, the postings writers' hot loops): shifts
 * instead of dividing. out must have room (5 bytes).
 */
export function writeVarintU32(out: Uint8Array, pos: number, value: number): number {
  while (value >= 0x80) {
    out[pos++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  out[pos++] = value;
  return pos;
}

/** Reads a varint at buf[pos]; returns [value, newPos]. */
export function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (;;) {
    if (pos >= buf.length) throw new RangeError('varint runs past the end of the buffer');
    const b = buf[pos++]!;
    value += (b & 0x7f) * scale;
    if (b < 0x80) return [value, pos];
    scale *= 128;
    if (scale > 2 ** 56) throw new RangeError('varint longer than 8 bytes');
  }
}

/** Bytes of v as a varint (v < 2^32): what writeVarintU32 writes. */
export const varintBytes = (v: number): number => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);
