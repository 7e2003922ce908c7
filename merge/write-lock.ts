/**
 * One writer per index: `write.lock` in the index folder, created exclusively, holding the
 * writer's process id and host. A lock whose process is gone on this host (a writer killed with
 * SIGKILL) is stale and taken over; a live one refuses the second writer with a line naming it.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../runtime/process-alive.js';

export const LOCK_FILE = 'write.lock';

export class LockHeld extends Error {}

export interface WriteLock {
  release(): void;
}

export function acquireWriteLock(dir: string): WriteLock {
  const path = join(dir, LOCK_FILE);
  const me = { pid: process.pid, host: hostname() };
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, JSON.stringify(me) + '\n');
      closeSync(fd);
      return { release: () => rmSync(path, { force: true }) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      let holder: { pid?: number; host?: string } = {};
      try {
        holder = JSON.parse(readFileSync(path, 'utf8'));
      } catch {
        // Torn while written: the writer died in its first moment.
      }
      if (holder.pid !== undefined && (holder.host !== me.host || processAlive(holder.pid)))
        throw new LockHeld(`${dir} has a writer already: process ${holder.pid} on ${holder.host} (${LOCK_FILE})`);
      rmSync(path, { force: true });
    }
  }
}
