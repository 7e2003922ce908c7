/**
 * Files shipped beside the compiled modules (WGSL kernels, the scanner's WebAssembly), found from
 * any of the places a module runs from: the TypeScript sources (the tests), tsc's output in
 * dist/, or a bundle (scripts/bundle.mjs: dist/src/cli.js, dist/indexer/parse-worker.js, ...)
 * that inlines the module. Each of those files sits one folder below the root its folders
 * share (src/, indexer/, gpu/, merge/ in the repository or in dist/), so a path from that root
 * resolves the same way from all of them, where `./kernels/x` would not from a bundle.
 */

/** `path` from the root of the module folders, e.g. 'gpu/kernels/doc-base.wgsl'. */
export const assetUrl = (path: string): URL => new URL(`../${path}`, import.meta.url);
