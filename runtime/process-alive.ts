/**
 * Whether process `pid` lives on this host: signal 0 tests it without touching it. EPERM means
 * it lives under another user. A lock file or a temporary folder whose process is gone is stale.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
