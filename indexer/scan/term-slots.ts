/**
 * The open-addressing part of the in-place raw-token tables, AsciiTermTable (keys as bytes) and
 * UnicodeTermTable (keys as UTF-16 code units): four Int32s a slot side by side (hash, key
 * length, offset of the key in the table's pool, value), linear probing, at most half full.
 * Length 0 marks an empty slot (tokens are never empty). Probing with characters of the text
 * is each table's own `get`: only it knows how the text's characters map to its keys.
 */
import { grown } from '../../runtime/grown.js';

export abstract class TermSlots<Pool extends Uint8Array | Uint16Array> {
  protected slots: Int32Array;
  protected pool: Pool;
  protected poolUsed = 0;
  protected mask: number;
  size = 0;

  /** `initialSlots`: a power of two; the pool starts with `poolPerSlot` elements a slot. */
  constructor(
    private readonly initialSlots: number,
    private readonly newPool: (length: number) => Pool,
    private readonly poolPerSlot: number,
  ) {
    this.slots = new Int32Array(4 * initialSlots);
    this.pool = newPool(initialSlots * poolPerSlot);
    this.mask = initialSlots - 1;
  }

  /** Bytes of its arrays (for the memory estimate). */
  get byteLength(): number {
    return this.slots.byteLength + this.pool.byteLength;
  }

  /** Adds `key` (hash h; its characters as the pool holds them); the caller has checked it is absent. */
  set(key: string, h: number, value: number): void {
    if (2 * (this.size + 1) > this.mask + 1) this.grow();
    if (this.poolUsed + key.length > this.pool.length) this.pool = grown(this.pool, this.poolUsed + key.length, this.poolUsed);
    const offset = this.poolUsed;
    for (let i = 0; i < key.length; i++) this.pool[offset + i] = key.charCodeAt(i);
    this.poolUsed += key.length;
    place(this.slots, this.mask, h, key.length, offset, value);
    this.size++;
  }

  clear(): void {
    this.slots = new Int32Array(4 * this.initialSlots);
    this.pool = this.newPool(this.initialSlots * this.poolPerSlot);
    this.poolUsed = 0;
    this.mask = this.initialSlots - 1;
    this.size = 0;
  }

  private grow(): void {
    const old = this.slots;
    const capacity = (this.mask + 1) * 2;
    this.slots = new Int32Array(4 * capacity);
    this.mask = capacity - 1;
    for (let b = 0; b < old.length; b += 4) if (old[b + 1] !== 0) place(this.slots, this.mask, old[b]!, old[b + 1]!, old[b + 2]!, old[b + 3]!);
  }
}

function place(slots: Int32Array, mask: number, h: number, length: number, offset: number, value: number): void {
  let slot = h & mask;
  while (slots[(slot << 2) + 1] !== 0) slot = (slot + 1) & mask;
  const b = slot << 2;
  slots[b] = h;
  slots[b + 1] = length;
  slots[b + 2] = offset;
  slots[b + 3] = value;
}
