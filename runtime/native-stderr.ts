/**
 * What native code writes to the process's stderr (file descriptor 2) during one synchronous
 * call, taken off the terminal. Dawn prints its adapter notices ("Warning: maxDynamic…
 * artificially reduced …") with fprintf(stderr) from requestAdapter(); no flag of create(), no
 * toggle and no callback reaches them.
 *
 * Node has no dup(2), so fd 2 is moved by hand: the original is reopened through /proc/self/fd
 * (the same terminal, pipe or file), fd 2 is closed and a capture file opened in its place (the
 * lowest free descriptor), and after the call the original is reopened into fd 2 again. That
 * works where a reopen is the same thing: a terminal, a pipe, a character device, a file opened
 * for appending (Linux only). A socket (a Node parent's 'pipe' stdio) cannot be reopened and a
 * file written in place would get a second write offset: there nothing is captured and the
 * lines pass as before. Another thread that opens a file in the moment fd 2 is free would take
 * it: then nothing is captured and the original goes back as soon as fd 2 is free again.
 *
 * In a worker thread only where the worker was created with `trackUnmanagedFds: false` and says
 * so (untrackedFds()): Node otherwise closes the descriptors a worker opened when it exits, and
 * the reopened fd 2 would be one of them.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, threadId } from 'node:worker_threads';

const { O_APPEND, O_NOCTTY, O_NONBLOCK, O_WRONLY } = constants;

export interface Captured<T> {
  value: T;
  /** What was written to fd 2 during the call; undefined where fd 2 could not be redirected. */
  text?: string;
}

let untracked = false;

/** Called by a worker thread created with `trackUnmanagedFds: false`: it may move fd 2. */
export function untrackedFds(): void {
  untracked = true;
}

/** Runs `fn` with fd 2 redirected to a capture file where that is safe (see above). */
export function captureStderr<T>(fn: () => T): Captured<T> {
  const flags = isMainThread || untracked ? reopenFlags() : undefined;
  if (flags === undefined) return { value: fn() };
  let original: number;
  let capture: number;
  const path = join(tmpdir(), `.gpuindex-stderr-${process.pid}-${threadId}-${Date.now()}`);
  try {
    original = openSync('/proc/self/fd/2', flags);
  } catch {
    return { value: fn() };
  }
  try {
    capture = openSync(path, 'w+', 0o600);
  } catch {
    closeSync(original);
    return { value: fn() };
  }
  try {
    closeSync(2);
    const at = openSync(path, 'a');
    if (at !== 2) {
      // Another thread took fd 2 in the meantime: give up capturing, put the original back.
      closeSync(at);
      restore(original, flags);
      return { value: fn() };
    }
    let value: T;
    try {
      value = fn();
    } finally {
      closeSync(2);
      restore(original, flags);
    }
    return { value, text: readFileSync(capture, 'utf8') };
  } finally {
    closeSync(capture);
    try {
      unlinkSync(path);
    } catch {
      // gone already
    }
  }
}

/** Dawn's own lines ("Warning: …", "Info: …") and the rest, which belongs on stderr after all. */
export function splitDawnLines(text: string): { dawn: string[]; other: string } {
  const dawn: string[] = [];
  const other: string[] = [];
  for (const line of text.split('\n')) {
    if (/^(Warning|Info|Debug): /.test(line)) dawn.push(line);
    else if (line !== '') other.push(line);
  }
  return { dawn, other: other.length ? other.join('\n') + '\n' : '' };
}

/** Writes text to fd 2 (the restored original). */
export function writeStderr(text: string): void {
  if (text) writeSync(2, text);
}

/** How fd 2 can be reopened as itself, or undefined where it cannot (see above). */
function reopenFlags(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  let st;
  try {
    st = fstatSync(2);
    // fd 0 and 1 must be open too, or fd 2 is not the lowest free descriptor once closed.
    fstatSync(0);
    fstatSync(1);
  } catch {
    return undefined;
  }
  // A pipe without a reader would block the open: non-blocking, as libuv keeps its pipes anyway.
  if (st.isFIFO()) return O_WRONLY | O_NONBLOCK;
  if (st.isCharacterDevice()) return O_WRONLY | O_NOCTTY;
  if (st.isFile() && appending()) return O_WRONLY | O_APPEND;
  return undefined;
}

/** Whether fd 2 was opened with O_APPEND (its flags in /proc/self/fdinfo, octal). */
function appending(): boolean {
  try {
    const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync('/proc/self/fdinfo/2', 'utf8'))?.[1];
    return flags !== undefined && (parseInt(flags, 8) & O_APPEND) !== 0;
  } catch {
    return false;
  }
}

/**
 * Reopens `original` into fd 2 (the lowest free descriptor once fd 2 is closed), then closes
 * `original`. Descriptors below 2 that come free meanwhile are held and released after; if
 * another thread holds fd 2, waits (up to 2 s) for it to let go.
 */
function restore(original: number, flags: number): void {
  const held: number[] = [];
  const deadline = Date.now() + 2000;
  try {
    for (;;) {
      const fd = openSync(`/proc/self/fd/${original}`, flags);
      if (fd === 2) break;
      if (fd < 2) held.push(fd);
      else closeSync(fd);
      if (Date.now() > deadline) return; // fd 2 stays another thread's; `original` is kept open
    }
    closeSync(original);
  } finally {
    for (const fd of held) closeSync(fd);
  }
}
