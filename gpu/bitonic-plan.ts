/**
 * The K-model mapping of the bitonic network (Sec. 5 of Capannini, Silvestri and Baraglia,
 * "Sorting on GPUs for large scale datasets: a thorough comparison"): which kernels run, in
 * which order, over which Γ-partition.
 *
 * The network is the all-ascending variant: the first step of stage k compares i with
 * i XOR (k-1) (the "flip"), later steps compare i with i + j; the smaller value always goes to
 * the lower index. Positions at or beyond n behave as +infinity and are never stored, so any n
 * sorts in a buffer of exactly n pairs (Θ(1) extra GPU memory).
 *
 * A Γ-partition groups the elements whose indexes differ only in the bits of Γ; each part is a
 * stream element that one kernel invocation (a workgroup tile, or one thread's registers)
 * loads, runs several network steps on, and stores back:
 *  - local-sort:  Γ0 = the low log2(T) bits; the first log2(T) stages entirely in workgroup memory.
 *  - global:      Γ = m step bits of a later stage (step distances j >= T), in registers; the
 *                 thread index supplies the low bits so neighbouring threads touch neighbouring
 *                 addresses (coalesced). With the flip step, the upper half of the k-block is
 *                 addressed mirrored so flip partners fall in the same part.
 *  - local-merge: the stage's last log2(T) steps (j < T) again in workgroup memory.
 */

export interface LocalSortPass {
  kind: 'local-sort';
}
export interface GlobalPass {
  kind: 'global';
  /** Stage: the size of the bitonic blocks being merged. */
  k: number;
  /** The largest step distance of this pass; the steps are jHi, jHi/2, ..., jHi/2^(m-1). */
  jHi: number;
  /** Number of network steps in this pass (|Γ|). */
  m: number;
  /** Whether the first step is the stage's flip (jHi = k/2). */
  flip: boolean;
}
export interface LocalMergePass {
  kind: 'local-merge';
  k: number;
}
export type SortPass = LocalSortPass | GlobalPass | LocalMergePass;

export const log2 = (x: number): number => 31 - Math.clz32(x);
export const nextPow2 = (x: number): number => (x <= 1 ? 1 : 2 ** Math.ceil(Math.log2(x)));

/**
 * The passes that sort n elements with tiles of T elements (power of two) and at most
 * maxSteps network steps per global pass.
 */
export function planSort(n: number, tile: number, maxSteps: number): SortPass[] {
  if (n <= 1) return [];
  const padded = nextPow2(n);
  const passes: SortPass[] = [{ kind: 'local-sort' }];
  for (let k = 2 * tile; k <= padded; k *= 2) {
    let j = k / 2;
    while (j >= tile) {
      const m = Math.min(maxSteps, log2(j) - log2(tile) + 1);
      passes.push({ kind: 'global', k, jHi: j, m, flip: j === k / 2 });
      j /= 2 ** m;
    }
    passes.push({ kind: 'local-merge', k });
  }
  return passes;
}

/** Steps of a one-dispatch-per-step network for n elements: log2(P)(log2(P)+1)/2. */
export function stepCount(n: number): number {
  const l = log2(nextPow2(Math.max(n, 2)));
  return (l * (l + 1)) / 2;
}

/** Passes over global memory (each reads and writes the whole block once). */
export const passCount = (n: number, tile: number, maxSteps: number): number => planSort(n, tile, maxSteps).length;

/** The shape of the kernels a plan is dispatched with. */
export interface DispatchShape {
  /** Pairs per workgroup tile (power of two). */
  tile: number;
  /** Invocations per tile workgroup. */
  tileThreads: number;
  /** Network steps per global pass (|Γ| at most). */
  maxSteps: number;
  /** Invocations per global-pass workgroup. */
  globalGroup: number;
  /** The adapter's maxComputeWorkgroupsPerDimension: more workgroups go 2-D. */
  maxGroupsPerDimension: number;
}

/** One dispatch of a sort: its pass, its workgroup grid and the Params uniform it reads. */
export interface Dispatch {
  pass: SortPass;
  /** Workgroups along x and y. */
  groups: [number, number];
  /** Params (common.wgsl): n, threads (invocations that work), logS, tilesX (workgroups along x). */
  params: [number, number, number, number];
}

/** The dispatches that sort n pairs: planSort() with grid sizes and uniforms filled in. */
export function planDispatches(n: number, s: DispatchShape): Dispatch[] {
  const tiles = Math.ceil(n / s.tile);
  const grid = (groups: number): [number, number] =>
    groups <= s.maxGroupsPerDimension ? [groups, 1] : [s.maxGroupsPerDimension, Math.ceil(groups / s.maxGroupsPerDimension)];
  return planSort(n, s.tile, s.maxSteps).map((pass) => {
    let groups: [number, number];
    let threads: number;
    let logS = 0;
    if (pass.kind === 'global') {
      // One invocation per part of 2^m pairs of the padded network.
      threads = nextPow2(n) / 2 ** pass.m;
      logS = log2(pass.jHi) - (pass.m - 1);
      groups = grid(Math.ceil(threads / s.globalGroup));
    } else {
      groups = grid(tiles);
      threads = tiles * s.tileThreads;
    }
    return { pass, groups, params: [n, threads, logS, groups[0]] };
  });
}
