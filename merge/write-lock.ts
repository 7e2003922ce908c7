/**
 * One writer per index: `write.lock` in the index folder (runtime/lock-file.ts), holding the
 * writer's process id and host. A lock whose process is gone on this host (a writer killed with
 * SIGKILL) is stale and taken over; a live one, or one of another host (whose processes this one
 * cannot see), refuses the second writer with a line naming it.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../runtime/process-alive.js';
import { releaseLockFile, takeLockFile, type LockHolder } from '../runtime/lock-file.js';

export const LOCK_FILE = 'write.lock';

export class LockHeld extends Error {}

export interface WriteLock {
  release(): void;
}

export function acquireWriteLock(dir: string): WriteLock {
  const path = join(dir, LOCK_FILE);
  const host = hostname();
  const holds = (h: LockHolder): boolean => h.pid !== undefined && (h.host !== host || processAlive(h.pid));
  const token = takeLockFile(path, holds, (h) => new LockHeld(`${dir} has a writer already: process ${h.pid} on ${h.host} (${LOCK_FILE})`));
  return { release: () => releaseLockFile(path, token) };
}
