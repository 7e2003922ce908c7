/**
 * The project's WebAssembly modules (built by `npm run build` from indexer/scan/wasm/): each
 * compiled once a thread, then instantiated with the AssemblyScript runtime's one import.
 */
import { readFileSync } from 'node:fs';
import { assetUrl } from './assets.js';

/** The parts of the WebAssembly API used here (TypeScript declares it only in its DOM libs). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const compiled = new Map<string, object>();

/**
 * A new instance of the module at `path` (from the package root, e.g.
 * 'indexer/scan/wasm/ascii-scan.wasm'), its exports typed `T`; `env` holds the functions it imports
 * besides the runtime's.
 */
export function wasmInstance<T>(path: string, env: Record<string, (...args: number[]) => number | void> = {}): T {
  let module = compiled.get(path);
  if (module === undefined) {
    const url = assetUrl(path);
    let bytes: Buffer;
    try {
      bytes = readFileSync(url);
    } catch {
      throw new Error(`gpuindex: ${url.pathname} is missing (run \`npm run build\`)`);
    }
    compiled.set(path, (module = new wasm.Module(bytes)));
  }
  const name = path.slice(path.lastIndexOf('/') + 1);
  const abort = (): never => {
    throw new Error(`gpuindex: ${name} aborted`);
  };
  return new wasm.Instance(module, { env: { abort, ...env } }).exports as T;
}
