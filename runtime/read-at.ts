/** Positioned reads that fill their buffer: readSync may return fewer bytes than asked before the end of a file. */
import { readSync } from 'node:fs';

/** Reads into `into` from `position` until it is full or the file ends; returns the bytes read (fewer only at the end). */
export function readFullAt(fd: number, into: Uint8Array, position: number): number {
  let got = 0;
  while (got < into.length) {
    const n = readSync(fd, into, got, into.length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}
