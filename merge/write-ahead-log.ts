/**
 * The writer's log of acknowledged operations, `wal.log` in the index folder: one JSON line per
 * operation with its sequence number, fsynced before the operation is acknowledged, so that an
 * acknowledged operation survives a crash (kill -9, power loss) between commits. A commit
 * records in segments.json the last sequence number its segments hold; reopening replays the
 * lines after it. A last line cut short by a crash was never acknowledged and is ignored.
 */
import { closeSync, existsSync, fsync, fsyncSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const WAL_FILE = 'wal.log';

/** An operation as the writer gives it; the log adds its sequence number. */
export type LoggedOperationBody = { op: 'add' | 'replace'; docs: unknown[] } | { op: 'delete'; ids: string[] };

export type LoggedOperation = { seq: number } & LoggedOperationBody;

export class WriteAheadLog {
  private readonly fd: number;
  private fsyncScheduled?: Promise<void>;

  constructor(
    dir: string,
    /** 0: fsync every operation before acknowledging it; > 0: fsync once per this many ms, for every operation in the window. */
    private readonly groupMs = 0,
  ) {
    this.fd = openSync(join(dir, WAL_FILE), 'a');
  }

  /** Appends one operation (`json`: its JSON, where the caller has it already); resolves once it is on disk. */
  async append(op: LoggedOperation, json = JSON.stringify(op)): Promise<void> {
    const line = Buffer.from(json + '\n');
    let off = 0;
    while (off < line.length) off += writeSync(this.fd, line, off, line.length - off);
    // On libuv's thread pool: the event loop (timers, merges completing, requests) runs meanwhile.
    if (this.groupMs <= 0) return fsyncAsync(this.fd);
    this.fsyncScheduled ??= new Promise<void>((resolve, reject) =>
      setTimeout(() => {
        this.fsyncScheduled = undefined;
        fsyncAsync(this.fd).then(resolve, reject);
      }, this.groupMs),
    );
    return this.fsyncScheduled;
  }

  /** Empties the log (its operations are in a commit by now), durably. */
  truncate(): void {
    ftruncateSync(this.fd, 0);
    fsyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}

function fsyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
}

/** The operations of `dir`'s log after sequence number `after`, in order; a torn last line is dropped. */
export function readLog(dir: string, after: number): LoggedOperation[] {
  const path = join(dir, WAL_FILE);
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  const ops: LoggedOperation[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let op: LoggedOperation;
    try {
      op = JSON.parse(line) as LoggedOperation;
    } catch {
      break; // cut short by a crash: never acknowledged, and nothing after it was written
    }
    if (op.seq > after) ops.push(op);
  }
  return ops;
}
