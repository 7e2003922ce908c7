/**
 * The one way the indexer grows its typed arrays (pair buffers, id tables, segment lists):
 * a fresh array of at least twice the length, the used prefix copied over, the rest zero.
 */
type Growable = Uint8Array | Uint16Array | Uint32Array | Int32Array;

/** A copy of `array` with room for `need` entries (at least twice its length), holding its first `keep` entries. */
export function grown<T extends Growable>(array: T, need: number, keep = array.length): T {
  const copy = new (array.constructor as new (length: number) => T)(Math.max(need, 2 * array.length));
  copy.set(array.subarray(0, keep));
  return copy;
}
