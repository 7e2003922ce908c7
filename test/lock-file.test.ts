import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { releaseLockFile, takeLockFile, type LockHolder } from '../runtime/lock-file.js';
import { acquireWriteLock, LockHeld } from '../merge/write-lock.js';
import { processAlive } from '../runtime/process-alive.js';

const dir = mkdtempSync(join(tmpdir(), 'gpuindex-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `lock-${n++}`);
const gone = () => spawnSync(process.execPath, ['-e', '0']).pid!; // exited by now
const busy = (h: LockHolder) => new Error(`busy ${h.pid} ${h.host}`);

describe('lock files', () => {
  it('a second taker is refused while the holder holds; the holder releases only its own lock', () => {
    const path = fresh();
    const token = takeLockFile(path, () => true, busy);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ pid: process.pid, host: hostname(), token });
    expect(() => takeLockFile(path, (h) => h.pid === process.pid, busy)).toThrow(`busy ${process.pid} ${hostname()}`);
    releaseLockFile(path, 'not-the-token');
    expect(existsSync(path)).toBe(true);
    releaseLockFile(path, token);
    expect(existsSync(path)).toBe(false);
    releaseLockFile(path, token); // gone: no error
  });

  it('takes over a holder that is gone, a torn file and one of the older formats', () => {
    for (const text of [JSON.stringify({ pid: gone(), host: hostname(), token: 'x' }), '{"pid": 12', `${gone()} 0123456789abcdef`, '']) {
      const path = fresh();
      writeFileSync(path, text);
      const token = takeLockFile(path, (h) => h.pid !== undefined && processAlive(h.pid), busy);
      expect(JSON.parse(readFileSync(path, 'utf8')).token).toBe(token);
    }
  });

  it("the writer's lock refuses a holder on another host, and takes over a dead one on this host", () => {
    const index = join(dir, `index-${n++}`);
    mkdirSync(index);
    writeFileSync(join(index, 'write.lock'), JSON.stringify({ pid: gone(), host: 'another-node' }));
    expect(() => acquireWriteLock(index)).toThrow(LockHeld);
    writeFileSync(join(index, 'write.lock'), JSON.stringify({ pid: gone(), host: hostname() }));
    const lock = acquireWriteLock(index);
    expect(() => acquireWriteLock(index)).toThrow(/has a writer already: process \d+ on /);
    lock.release();
    expect(existsSync(join(index, 'write.lock'))).toBe(false);
  });
});
