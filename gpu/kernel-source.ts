/**
 * WGSL sources: the templates in gpu/kernels/*.wgsl with their constants filled in, and the
 * straight-line register code of a global pass generated here (unrolled so the 2^M pairs stay
 * in registers rather than in an indexed array that compilers may spill to memory).
 */
import { readFileSync } from 'node:fs';
import { assetUrl } from '../runtime/assets.js';

const template = (name: string): string => readFileSync(assetUrl(`gpu/kernels/${name}`), 'utf8');

function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (_, key: string) => {
    if (!(key in values)) throw new Error(`kernel template: no value for {{${key}}}`);
    return String(values[key]);
  });
}

/**
 * The tile kernels (local_sort, local_merge). With `fuse`, local_sort runs stages 2 .. 16 as one
 * register phase (a 16-register sorting network, one barrier instead of four) and local_merge
 * loads its first phase straight from global memory into registers (the same coalesced
 * addresses as the tile copy, one shared-memory round trip and one barrier fewer).
 */
export function localKernelSource(tile: number, threads: number, fuse = false): string {
  return (
    template('common.wgsl') +
    '\n' +
    fill(template('local.wgsl'), {
      TILE: tile,
      TILE_PADDED: tile + tile / 16,
      THREADS: threads,
      SORT_COPY_IN: tileCopyIn(tile, threads),
      MERGE_COPY_IN: fuse ? '  // (fused: the first phase loads from global memory)' : tileCopyIn(tile, threads),
      COPY_OUT: tileCopyOut(tile, threads),
      SORT_BODY: localSortBody(tile, fuse),
      MERGE_BODY: localMergeBody(tile, fuse),
    })
  );
}

/** Compare-exchange of registers x and y that leaves the smaller pair in x. */
const cas = (x: number, y: number): string =>
  `  { let lt = less(r${y}, r${x}); let tx = r${x}; r${x} = select(r${x}, r${y}, lt); r${y} = select(r${y}, tx, lt); }`;

/**
 * The compare-exchanges of m network steps on registers r0 .. r(2^m - 1) whose indexes differ
 * in m consecutive bits (a Γ-partition part), with or without the stage's flip first. With the
 * flip, registers h/2 .. h-1 hold the mirrored upper half of the block (addresses shrinking as
 * the register number grows), so the smaller value goes to the higher register there.
 */
export function registerSteps(m: number, flip: boolean): string[] {
  const h = 1 << m;
  const half = h / 2;
  const lines: string[] = [];
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
  return lines;
}

/** Index expression of register g of a part: bits lo..lo+m-1 from g, the rest from (kbase, low). */
function partIndex(g: number, m: number, flip: boolean, S: string, M: string): string {
  const half = 1 << (m - 1);
  return flip && g >= half ? `kbase + (${S} << ${M}) - 1u - (${g - half}u * ${S} + low)` : `kbase + ${g}u * ${S} + low`;
}

/** The body of a global pass of m steps, with or without the stage's flip as its first step. */
export function globalPassBody(m: number, flip: boolean): string {
  const h = 1 << m;
  const lines: string[] = [];
  for (let g = 0; g < h; g++) lines.push(`  let a${g} = ${partIndex(g, m, flip, 'S', 'M')};`, `  var r${g} = load(a${g});`);
  lines.push(...registerSteps(m, flip));
  for (let g = 0; g < h; g++) lines.push(`  if (a${g} < params.n) { data[a${g}] = r${g}; }`);
  return lines.join('\n');
}

export function globalKernelSource(m: number, flip: boolean, group: number): string {
  return template('common.wgsl') + '\n' + fill(template('global.wgsl'), { M: m, GROUP: group, BODY: globalPassBody(m, flip) });
}

/** Steps per register phase inside a tile: 16 pairs per invocation. */
export const TILE_PHASE_BITS = 4;

/**
 * One phase of a tile kernel: every invocation takes parts of 2^m pairs of the tile (indexes
 * differing in bits lo .. lo+m-1), runs m steps in registers, writes them back; then a barrier.
 * With `fromGlobal` the part is loaded from the block (global memory) instead of the tile: the
 * first phase of a fused local_merge, which replaces the tile copy-in.
 */
function tilePhase(lo: number, m: number, flip: boolean, fromGlobal = false): string {
  const h = 1 << m;
  const lines = [`  for (var part = lid; part < (TILE >> ${m}u); part += THREADS) {`, `    let low = part & ${(1 << lo) - 1}u;`, `    let kbase = (part >> ${lo}u) << ${lo + m}u;`];
  if (fromGlobal) {
    // All loads issued before any is used (their latencies overlap), as in tileCopyIn.
    for (let g = 0; g < h; g++) lines.push(`    let a${g} = ${partIndex(g, m, flip, `${1 << lo}u`, `${m}u`)};`);
    for (let g = 0; g < h; g++) lines.push(`    var r${g} = load(base + a${g});`);
  } else {
    for (let g = 0; g < h; g++) lines.push(`    let a${g} = pad(${partIndex(g, m, flip, `${1 << lo}u`, `${m}u`)});`, `    var r${g} = tile[a${g}];`);
  }
  lines.push(...registerSteps(m, flip).map((l) => '  ' + l));
  for (let g = 0; g < h; g++) lines.push(fromGlobal ? `    tile[pad(a${g})] = r${g};` : `    tile[a${g}] = r${g};`);
  lines.push('  }', '  workgroupBarrier();');
  return lines.join('\n');
}

/**
 * The compare-exchanges of a whole bitonic sort of 2^m registers holding 2^m consecutive pairs
 * in address order (stages 2 .. 2^m, flips included; the smaller pair to the lower register).
 */
export function registerSortNetwork(m: number): string[] {
  const h = 1 << m;
  const lines: string[] = [];
  for (let k = 2; k <= h; k *= 2) {
    for (let g = 0; g < h; g++) if (!(g & (k / 2))) lines.push(cas(g, g ^ (k - 1))); // the flip
    for (let j = k / 4; j >= 1; j /= 2) for (let g = 0; g < h; g++) if (!(g & j)) lines.push(cas(g, g + j));
  }
  return lines;
}

/** One phase that sorts parts of 2^m consecutive pairs of the tile completely (stages 2 .. 2^m). */
function tileSortPhase(m: number): string {
  const h = 1 << m;
  const lines = [`  for (var part = lid; part < (TILE >> ${m}u); part += THREADS) {`, `    let kbase = part << ${m}u;`];
  for (let g = 0; g < h; g++) lines.push(`    let a${g} = pad(kbase + ${g}u);`, `    var r${g} = tile[a${g}];`);
  lines.push(...registerSortNetwork(m).map((l) => '  ' + l));
  for (let g = 0; g < h; g++) lines.push(`    tile[a${g}] = r${g};`);
  lines.push('  }', '  workgroupBarrier();');
  return lines.join('\n');
}

/**
 * The phases for the steps of stage 2^stageBits whose distances are 2^(fromBit) down to 1
 * (the first of them loading from global memory when `firstFromGlobal`).
 */
function stagePhases(stageBits: number, fromBit: number, firstFromGlobal = false): string[] {
  const out: string[] = [];
  let hi = fromBit;
  while (hi >= 0) {
    const m = Math.min(TILE_PHASE_BITS, hi + 1);
    out.push(tilePhase(hi - m + 1, m, hi === stageBits - 1, firstFromGlobal && hi === fromBit));
    hi -= m;
  }
  return out;
}

/** local_sort: stages 2 .. TILE of the network, in register phases over the tile. */
export function localSortBody(tile: number, fuse = false): string {
  const bits = Math.log2(tile);
  const phases: string[] = [];
  let s = 1;
  if (fuse) {
    const first = Math.min(TILE_PHASE_BITS, bits);
    phases.push(`  // stages 2 .. ${2 ** first} in registers`, tileSortPhase(first));
    s = first + 1;
  }
  for (; s <= bits; s++) phases.push(`  // stage ${2 ** s}`, ...stagePhases(s, s - 1));
  return phases.join('\n');
}

/** local_merge: the last log2(TILE) steps of a stage larger than the tile (no flips). */
export function localMergeBody(tile: number, fuse = false): string {
  return stagePhases(Number.POSITIVE_INFINITY, Math.log2(tile) - 1, fuse).join('\n');
}

/**
 * Copying a tile between global and workgroup memory, unrolled: all TILE/THREADS loads of an
 * invocation are issued before any is used, so their latencies overlap (a loop that loads and
 * stores one pair per iteration waits a full global-memory latency per pair).
 */
export function tileCopyIn(tile: number, threads: number): string {
  const per = tile / threads;
  const lines: string[] = [];
  for (let i = 0; i < per; i++) lines.push(`  let v${i} = load(base + lid + ${i * threads}u);`);
  for (let i = 0; i < per; i++) lines.push(`  tile[pad(lid + ${i * threads}u)] = v${i};`);
  lines.push('  workgroupBarrier();');
  return lines.join('\n');
}

export function tileCopyOut(tile: number, threads: number): string {
  const per = tile / threads;
  const lines: string[] = [];
  for (let i = 0; i < per; i++) lines.push(`  let w${i} = tile[pad(lid + ${i * threads}u)];`);
  for (let i = 0; i < per; i++) lines.push(`  if (base + lid + ${i * threads}u < params.n) { data[base + lid + ${i * threads}u] = w${i}; }`);
  return lines.join('\n');
}

/** Workgroup memory a tile needs: one padding pair every 16 pairs against bank conflicts. */
export const tileBytes = (tile: number): number => (tile + tile / 16) * 8;
