/**
 * A lock file: created exclusively, holding its holder's process id, host and a random token as
 * JSON. A holder that `holds` says is gone is taken over (a process killed with SIGKILL leaves
 * its lock behind); a live one is refused. Released only by the token that took it, so a holder
 * whose lock was taken over cannot remove its successor's. The index writer's lock
 * (merge/write-lock.ts) and the resume folder's (indexer/checkpoint/checkpoint.ts) differ in
 * `holds` only.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** What a lock file says of its holder: any field may be missing (a file torn as it was written, or of an older format). */
export interface LockHolder {
  pid?: number;
  host?: string;
  token?: string;
}

/**
 * Takes the lock file at `path`, returning its token; throws busy(holder) while `holds(holder)`
 * says its holder is there.
 */
export function takeLockFile(path: string, holds: (holder: LockHolder) => boolean, busy: (holder: LockHolder) => Error): string {
  const me = { pid: process.pid, host: hostname(), token: randomBytes(8).toString('hex') };
  let holder: LockHolder = {};
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(me) + '\n', { flag: 'wx' });
      return me.token;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue; // released meanwhile
    }
    holder = parseHolder(text);
    if (holds(holder)) throw busy(holder);
    rmSync(path, { force: true });
  }
  throw busy(holder);
}

/** Removes the lock file at `path` if `token` still holds it; a no-op once it is gone. */
export function releaseLockFile(path: string, token: string): void {
  try {
    if (parseHolder(readFileSync(path, 'utf8')).token === token) rmSync(path, { force: true });
  } catch {
    // gone (with its folder)
  }
}

function parseHolder(text: string): LockHolder {
  try {
    const h = JSON.parse(text) as unknown;
    return typeof h === 'object' && h !== null ? (h as LockHolder) : {};
  } catch {
    return {}; // torn while written: its writer died in its first moment
  }
}
