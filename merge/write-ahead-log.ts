/**
 * The writer's log of acknowledged operations, `wal.log` in the index folder: one record per
 * operation with its sequence number (merge/wal-record.ts), fsynced before the operation is
 * acknowledged, so that an acknowledged operation survives a crash (kill -9, power loss) between
 * commits. A commit records in segments.json the last sequence number its segments hold;
 * reopening replays the records after it.
 *
 * The file is WAL_MAGIC, then per record its length (u32), the CRC-32 of its bytes (u32) and the
 * bytes. A last record cut short or damaged by a crash was never acknowledged: it and anything
 * after it are ignored. A log of JSON lines (earlier writers) is read as such and rewritten in
 * records when a writer opens it.
 */
import { closeSync, existsSync, fsync, fsyncSync, ftruncateSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { decodeOperation, encodeOperation } from './wal-record.js';

export const WAL_FILE = 'wal.log';
export const WAL_MAGIC = Buffer.from('GPIXWAL2');

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
    const path = join(dir, WAL_FILE);
    const existing = existsSync(path) ? readFileSync(path) : undefined;
    if (!existing || existing.length === 0 || !existing.subarray(0, WAL_MAGIC.length).equals(WAL_MAGIC)) {
      // A new log, or JSON lines of an earlier writer: its operations, rewritten as records.
      const records = (existing && existing.length > 0 ? readLog(dir, -Infinity) : []).map((op) => frame(encodeOperation(op)));
      writeFileSync(`${path}.tmp`, Buffer.concat([WAL_MAGIC, ...records]));
      syncPath(`${path}.tmp`);
      renameSync(`${path}.tmp`, path);
      syncPath(dir);
    } else {
      // A record a crash cut short is cut off, or the records appended after it would be lost with it.
      const { end } = readRecords(existing, -Infinity);
      if (end < existing.length) {
        const fd = openSync(path, 'r+');
        try {
          ftruncateSync(fd, end);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
    }
    this.fd = openSync(path, 'a');
  }

  /**
   * Appends one operation (`record`: its encodeOperation() bytes, where the caller has them
   * already); resolves once it is on disk. The record is written before this returns.
   */
  async append(op: LoggedOperation, record = encodeOperation(op)): Promise<void> {
    const framed = frame(record);
    let off = 0;
    while (off < framed.length) off += writeSync(this.fd, framed, off, framed.length - off);
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
    ftruncateSync(this.fd, WAL_MAGIC.length);
    fsyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** A record's length and checksum, then its bytes. */
function frame(record: Buffer): Buffer {
  const out = Buffer.allocUnsafe(8 + record.length);
  out.writeUInt32LE(record.length, 0);
  out.writeUInt32LE(crc32(record), 4);
  record.copy(out, 8);
  return out;
}

function fsyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
}

function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The operations of `dir`'s log after sequence number `after`, in order; a torn or damaged last record is dropped. */
export function readLog(dir: string, after: number): LoggedOperation[] {
  const path = join(dir, WAL_FILE);
  if (!existsSync(path)) return [];
  const bytes = readFileSync(path);
  if (bytes.subarray(0, WAL_MAGIC.length).equals(WAL_MAGIC)) return readRecords(bytes, after).ops;
  const ops: LoggedOperation[] = [];
  for (const line of bytes.toString('utf8').split('\n')) {
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

/** The operations of a log in records after sequence number `after`, and where its last whole record ends. */
function readRecords(bytes: Buffer, after: number): { ops: LoggedOperation[]; end: number } {
  const ops: LoggedOperation[] = [];
  let at = WAL_MAGIC.length;
  while (at + 8 <= bytes.length) {
    const end = at + 8 + bytes.readUInt32LE(at);
    // Cut short or damaged by a crash: never acknowledged, and nothing after it was written.
    if (end > bytes.length) break;
    const record = bytes.subarray(at + 8, end);
    if (crc32(record) !== bytes.readUInt32LE(at + 4)) break;
    let op: LoggedOperation;
    try {
      op = decodeOperation(record);
    } catch {
      break;
    }
    if (op.seq > after) ops.push(op);
    at = end;
  }
  return { ops, end: at };
}
