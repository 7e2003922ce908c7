/**
 * A mistake of the user's (bad path, bad option, existing output): the CLI prints the message
 * as one line and exits 1, with no stack trace.
 */
export class UserError extends Error {
  override readonly name = 'UserError';
}

/** Thrown when a build is cancelled through its AbortSignal. */
export class AbortError extends Error {
  override readonly name = 'AbortError';
  constructor(message = 'the build was aborted') {
    super(message);
  }
}

/** A full disk or quota: Node's errno codes and SQLite's (better-sqlite3 sets `code`). */
const DISK_FULL = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);
/** SQLite failing to create or write its file (e.g. no inode left for it). */
const SQLITE_WRITE = /^SQLITE_(CANTOPEN|IOERR|READONLY)/;

/** The system error code of `err` (ENOSPC, SQLITE_FULL, ...), when it has one. */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * When `err` is a failure to store the index being written to `output` (disk full, quota, SQLite
 * unable to write), the one line to show for it; otherwise undefined. The file that failed
 * lives in the output's temporary sibling (and a write to a file descriptor names no path),
 * so the line names the output.
 */
export function storageFailure(err: unknown, output: string): string | undefined {
  const code = errorCode(err);
  if (code === undefined) return undefined;
  const message = String((err as Error).message ?? '').replace(/\s*\n\s*/g, '; ');
  const detail = message.startsWith(code) ? message : `${code}: ${message}`;
  if (DISK_FULL.has(code)) return `no space left on the device for ${output} (${detail})`;
  if (SQLITE_WRITE.test(code)) return `cannot write the index ${output} (${detail})`;
  return undefined;
}
