/**
 * A full collection of this thread's heap, on demand. Node exposes `gc` only under
 * --expose-gc, which a worker's execArgv may not carry; the flag set at run time installs it in
 * contexts made after, so one new context hands it over.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

export function collectFullHeap(): void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  collect();
}
