// The lines of a (JSONL) file, read in 16 MiB chunks, for the bench scripts that feed other
// engines the crawl's documents (FTS5, the ingest stream).
import { closeSync, openSync, readSync } from 'node:fs';

/** Non-empty lines of `path`, without their newlines. */
export function* lines(path) {
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(16 << 20);
  let carry = '';
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      // Cut at the last newline so no UTF-8 sequence is split.
      const last = buf.lastIndexOf(0x0a, n - 1);
      if (last < 0) {
        carry += buf.toString('utf8', 0, n);
        continue;
      }
      const text = carry + buf.toString('utf8', 0, last + 1);
      carry = buf.toString('utf8', last + 1, n);
      let start = 0;
      for (;;) {
        const nl = text.indexOf('\n', start);
        if (nl < 0) break;
        if (nl > start) yield text.slice(start, nl);
        start = nl + 1;
      }
    }
    if (carry.trim()) yield carry;
  } finally {
    closeSync(fd);
  }
}
