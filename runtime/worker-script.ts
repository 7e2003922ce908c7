/**
 * Where the compiled script of a worker thread is. Workers run compiled JavaScript: from the
 * build the script is under the module root (dist/); from the TypeScript sources (the tests) it
 * is the compiled one in the repository's dist/.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { moduleRoot } from './assets.js';

/** `modulePath`: the worker's compiled path from the package root, e.g. 'merge/merge-worker.js'. */
export function workerScript(modulePath: string): URL {
  for (const path of [join(moduleRoot(), modulePath), join(moduleRoot(), 'dist', modulePath)]) {
    if (existsSync(path)) return pathToFileURL(path);
  }
  throw new Error(`${modulePath} is not built: run \`npm run build\``);
}
