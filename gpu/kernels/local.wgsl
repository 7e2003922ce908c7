// Γ0 and final-steps partitions in workgroup memory: a workgroup copies a tile of TILE pairs in
// (coalesced, unrolled: SORT_COPY_IN / MERGE_COPY_IN), runs network steps in register phases
// (each invocation takes parts of 16 pairs whose indexes differ in 4 step bits, runs those 4
// steps in registers, writes them back; one barrier per phase instead of one per step), and
// copies the tile out (COPY_OUT).
//   local_sort:  stages 2 .. TILE (flips included)
//   local_merge: the last log2(TILE) steps (j = TILE/2 .. 1) of a stage k > TILE
// The register code of each phase is generated (kernel-source.ts) into SORT_BODY / MERGE_BODY.
// Fused kernels (GpuSorterOptions.fuse): local_sort's first phase sorts 16 consecutive pairs
// (stages 2 .. 16) at once; local_merge has no copy-in, its first phase loads from global memory.

const TILE: u32 = {{TILE}}u;
const THREADS: u32 = {{THREADS}}u;

// One padding pair every 16 pairs: parts of 16 consecutive pairs would otherwise hit one bank.
var<workgroup> tile: array<vec2<u32>, {{TILE_PADDED}}>;

fn pad(i: u32) -> u32 {
  return i + (i >> 4u);
}


@compute @workgroup_size(THREADS)
fn local_sort(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let base = (wid.y * params.tilesX + wid.x) * TILE;
{{SORT_COPY_IN}}
{{SORT_BODY}}
{{COPY_OUT}}
}

@compute @workgroup_size(THREADS)
fn local_merge(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let base = (wid.y * params.tilesX + wid.x) * TILE;
{{MERGE_COPY_IN}}
{{MERGE_BODY}}
{{COPY_OUT}}
}
