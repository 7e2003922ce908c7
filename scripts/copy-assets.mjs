// Copies non-TypeScript assets (WGSL kernels) next to the compiled JS so that
// `new URL('./kernels/x.wgsl', import.meta.url)` resolves the same in src and dist.
import { cpSync, mkdirSync } from 'node:fs';
mkdirSync('dist/gpu/kernels', { recursive: true });
cpSync('gpu/kernels', 'dist/gpu/kernels', { recursive: true });
