/**
 * A query's hits' document rows (external id, path) come from chunks of ROW_CHUNK consecutive
 * docIDs, each read from index.sqlite by one statement and kept in the reader's row cache. Looked
 * up one by one, a row costs 4 µs with SQLite's pages in the CPU's caches and 20 µs after other
 * work took them (10 hits: 0.04-0.2 ms of a query); a chunk of 1,024 costs about 0.08 ms to
 * read, and then a lookup in memory.
 */
import type { JoinedRows } from '../../merge/segment-reader.js';

export type { JoinedRows };

/** Consecutive docIDs a chunk holds. */
export const ROW_CHUNK = 1024;

/** One chunk's external ids and paths, each column one string with its rows' ends. */
export interface RowChunk {
  ids: string;
  idEnds: Uint32Array;
  paths: string;
  pathEnds: Uint32Array;
  /** Bytes it holds (strings at their V8 width, the ends at 4 bytes a row). */
  bytes: number;
}

/**
 * The chunk of the rows `joined` returns for docIDs [from, to), or undefined when they are not
 * one row a docID or a value holds the separator (the rows are then looked up one by one).
 */
export function rowChunk(joined: JoinedRows, from: number, to: number): RowChunk | undefined {
  const [count, min, max, ids, paths] = joined;
  if (count !== to - from || min !== from || max !== to - 1 || ids === null || paths === null) return undefined;
  const idEnds = ends(ids, count);
  const pathEnds = idEnds && ends(paths, count);
  if (!idEnds || !pathEnds) return undefined;
  return { ids, idEnds, paths, pathEnds, bytes: width(ids) * ids.length + width(paths) * paths.length + 8 * count + 64 };
}

/** Where each of `count` values joined by U+0000 ends; undefined when the string holds another number of them. */
function ends(joined: string, count: number): Uint32Array | undefined {
  const out = new Uint32Array(count);
  let at = 0;
  for (let i = 0; i < count - 1; i++) {
    const sep = joined.indexOf('\0', at);
    if (sep < 0) return undefined;
    out[i] = sep;
    at = sep + 1;
  }
  if (joined.indexOf('\0', at) >= 0) return undefined;
  out[count - 1] = joined.length;
  return out;
}

/** Bytes a character of `s` takes in V8: 1 where every character is Latin-1, else 2. */
function width(s: string): number {
  return /[^\0-\xff]/.test(s) ? 2 : 1;
}

/** Row `i` of the chunk (0 = its first docID): [external id, path]. */
export function chunkRow(c: RowChunk, i: number): [string, string] {
  return [c.ids.slice(i === 0 ? 0 : c.idEnds[i - 1]! + 1, c.idEnds[i]!), c.paths.slice(i === 0 ? 0 : c.pathEnds[i - 1]! + 1, c.pathEnds[i]!)];
}
