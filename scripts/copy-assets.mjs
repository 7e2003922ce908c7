// After tsc: copies non-TypeScript assets (WGSL kernels, the scanner's WebAssembly) next to the compiled JS so that
// `new URL('./kernels/x.wgsl', import.meta.url)` resolves the same in src and dist, and marks
// the package's bin executable (tsc writes it without the bit, and `npx gpuindex` in a fresh
// clone runs it directly: "Permission denied" otherwise).
import { chmodSync, cpSync, mkdirSync } from 'node:fs';
mkdirSync('dist/gpu/kernels', { recursive: true });
cpSync('gpu/kernels', 'dist/gpu/kernels', { recursive: true });
mkdirSync('dist/indexer/scan/wasm', { recursive: true });
cpSync('indexer/scan/wasm/ascii-scan.wasm', 'dist/indexer/scan/wasm/ascii-scan.wasm');
cpSync('indexer/scan/wasm/html-tokens.wasm', 'dist/indexer/scan/wasm/html-tokens.wasm');
chmodSync('dist/src/cli.js', 0o755);
