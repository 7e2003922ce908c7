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

/**
 * Text for one line of a terminal: control characters (a file name may hold a newline or an
 * escape sequence, a JSON error message quotes the line's bytes) written as \n, \x1b, \u2028.
 * (A reader's reason is already one line: read-file.ts turns control characters in an error
 * message into spaces; this escapes what a path brings.)
 */
export function escapeControls(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : c.charCodeAt(0) < 0x100 ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}` : `\\u${c.charCodeAt(0).toString(16)}`));
}
