/**
 * The package root as the running module sees it, and the files shipped beside the compiled
 * modules (WGSL kernels, the scanner's WebAssembly). A module runs from the TypeScript sources
 * (the tests), from tsc's output in dist/, or from a bundle (scripts/bundle.mjs) that inlines it
 * into an entry at any depth (dist/src/cli.js, dist/indexer/parse/parse-worker.js, ...), so the
 * root is found by walking up to the folder that holds the layer folders, not by a fixed `../`.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The folder holding src/, indexer/, gpu/, merge/ and runtime/: the repository or dist/. */
function findModuleRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'runtime')) && existsSync(join(dir, 'indexer')) && existsSync(join(dir, 'merge'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`gpuindex: no module root above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

let root: string | undefined;

/** The module root as a file path (see findModuleRoot). */
export function moduleRoot(): string {
  return (root ??= findModuleRoot());
}

/** `path` from the module root, e.g. 'gpu/kernels/doc-base.wgsl'. */
export const assetUrl = (path: string): URL => pathToFileURL(join(moduleRoot(), path));
