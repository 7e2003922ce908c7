import { RawTokenList, type RawTokenBytes } from '../../indexer/scan/raw-token-list.js';

/** A batch's raw tokens as strings, read back through a RawTokenList as the main thread reads them. */
export function tokenStrings(b: RawTokenBytes): string[] {
  const list = new RawTokenList();
  list.append(b);
  return Array.from({ length: list.count }, (_, i) => list.string(i));
}
