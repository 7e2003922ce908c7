/**
 * Where the compiled script of a worker thread is. Workers run compiled JavaScript: from the
 * build (dist/src/ here) the script is beside this module's folder; from the TypeScript
 * sources (src/ here, as the tests run) it is the compiled one in dist/.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** `modulePath`: the worker's compiled path from the package root, e.g. 'merge/merge-worker.js'. */
export function workerScript(modulePath: string): URL {
  for (const relative of [`../${modulePath}`, `../dist/${modulePath}`]) {
    const url = new URL(relative, import.meta.url);
    if (existsSync(fileURLToPath(url))) return url;
  }
  throw new Error(`${modulePath} is not built: run \`npm run build\``);
}
