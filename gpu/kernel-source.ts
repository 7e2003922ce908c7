/**
 * WGSL sources: the templates in gpu/kernels/*.wgsl with their constants filled in, and the
 * straight-line register code of a global pass generated here (unrolled so the 2^M pairs stay
 * in registers rather than in an indexed array that compilers may spill to memory).
 */
import { readFileSync } from 'node:fs';

const template = (name: string): string => readFileSync(new URL(`./kernels/${name}`, import.meta.url), 'utf8');

function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (_, key: string) => {
    if (!(key in values)) throw new Error(`kernel template: no value for {{${key}}}`);
    return String(values[key]);
  });
}

export function localKernelSource(tile: number, threads: number): string {
  return template('common.wgsl') + '\n' + fill(template('local.wgsl'), { TILE: tile, THREADS: threads });
}

/** Compare-exchange of registers x and y that leaves the smaller pair in x. */
const cas = (x: number, y: number): string =>
  `  { let lt = less(r${y}, r${x}); let tx = r${x}; r${x} = select(r${x}, r${y}, lt); r${y} = select(r${y}, tx, lt); }`;

/** The body of a global pass of m steps, with or without the stage's flip as its first step. */
export function globalPassBody(m: number, flip: boolean): string {
  const h = 1 << m;
  const half = h / 2;
  const lines: string[] = [];
  for (let g = 0; g < h; g++) {
    const addr = flip && g >= half ? `kbase + (S << M) - 1u - (${g - half}u * S + low)` : `kbase + ${g}u * S + low`;
    lines.push(`  let a${g} = ${addr};`, `  var r${g} = load(a${g});`);
  }
  if (flip) {
    for (let g = 0; g < half; g++) lines.push(cas(g, g + half));
    for (let q = m - 2; q >= 0; q--) {
      const d = 1 << q;
      for (let g = 0; g < half; g++) {
        if (g & d) continue;
        lines.push(cas(g, g + d)); // lower half: addresses grow with g
        lines.push(cas(half + g + d, half + g)); // mirrored upper half: addresses shrink with g
      }
    }
  } else {
    for (let q = m - 1; q >= 0; q--) {
      const d = 1 << q;
      for (let g = 0; g < h; g++) if (!(g & d)) lines.push(cas(g, g + d));
    }
  }
  for (let g = 0; g < h; g++) lines.push(`  if (a${g} < params.n) { data[a${g}] = r${g}; }`);
  return lines.join('\n');
}

export function globalKernelSource(m: number, flip: boolean, group: number): string {
  return template('common.wgsl') + '\n' + fill(template('global.wgsl'), { M: m, GROUP: group, BODY: globalPassBody(m, flip) });
}
