// Batcher's odd-even merge sort on the same buffer and Params layout as the bitonic network
// (common.wgsl's bindings: data, params). Stage p (sorted runs of p pairs merged into 2p)
// runs steps k = p, p/2, ..., 1; step k compares x with x + k for every x whose offset in its
// 2p-block, less k when k < p, has bit k clear (mod 2k < k), when x + k is in the same 2p-block.
// The smaller pair goes to the lower index; indexes >= n act as +infinity and are never stored.
//
// Unlike the bitonic network's, the comparators of one step with k < p are XOR partners only
// after shifting the index by k, a different shift at every step: consecutive steps cannot
// share a Γ-partition, and the steps k < T of a stage p >= T cross tile boundaries. So only
// the stages p < T run in a workgroup tile (oe_local_sort); every later step is one dispatch
// (oe_global_step), as in the CUDA samples' oddEvenMergeSort.
struct OeParams {
  n: u32,          // pairs in the block
  comparators: u32, // invocations that work in this dispatch (oe_global_step)
  logs: u32,       // bits 0..7: log2 p; bits 8..15: log2 k (oe_global_step)
  tilesX: u32,     // workgroups along x (2-D dispatch when there are more than the x limit)
}

@group(0) @binding(0) var<storage, read_write> data: array<vec2<u32>>;
@group(0) @binding(1) var<uniform> params: OeParams;

const SENTINEL = vec2<u32>(0xffffffffu, 0xffffffffu);
const TILE: u32 = {{TILE}}u;
const LOG_TILE: u32 = {{LOG_TILE}}u;
const THREADS: u32 = {{THREADS}}u;
const GROUP: u32 = {{GROUP}}u;

fn less(a: vec2<u32>, b: vec2<u32>) -> bool {
  return a.x < b.x || (a.x == b.x && a.y < b.y);
}

fn load(i: u32) -> vec2<u32> {
  if (i < params.n) { return data[i]; }
  return SENTINEL;
}

// Comparator c of step k of stage p: its lower index, or 0xffffffff when it compares nothing
// (its partner would leave the 2p-block).
fn lowerOf(c: u32, logP: u32, logK: u32) -> u32 {
  let k = 1u << logK;
  // c -> the c-th index whose offset (less k when k < p) has bit k clear
  let w = ((c >> logK) << (logK + 1u)) | (c & (k - 1u));
  if (logK == logP) { return w; }
  let x = w + k;
  if ((x >> (logP + 1u)) != ((x + k) >> (logP + 1u))) { return 0xffffffffu; }
  return x;
}

var<workgroup> tile: array<vec2<u32>, {{TILE_PADDED}}>;

fn pad(i: u32) -> u32 {
  return i + (i >> 4u);
}

// Stages p = 1 .. TILE/2 of a tile: every step in workgroup memory, one barrier a step.
@compute @workgroup_size(THREADS)
fn oe_local_sort(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let base = (wid.y * params.tilesX + wid.x) * TILE;
  for (var i = lid; i < TILE; i += THREADS) { tile[pad(i)] = load(base + i); }
  workgroupBarrier();
  for (var logP = 0u; logP < LOG_TILE; logP++) {
    for (var logK = logP + 1u; logK > 0u; logK--) {
      for (var c = lid; c < TILE / 2u; c += THREADS) {
        let x = lowerOf(c, logP, logK - 1u);
        if (x != 0xffffffffu) {
          let y = x + (1u << (logK - 1u));
          let a = tile[pad(x)];
          let b = tile[pad(y)];
          if (less(b, a)) {
            tile[pad(x)] = b;
            tile[pad(y)] = a;
          }
        }
      }
      workgroupBarrier();
    }
  }
  for (var i = lid; i < TILE; i += THREADS) {
    if (base + i < params.n) { data[base + i] = tile[pad(i)]; }
  }
}

// One step of a stage p >= TILE over the whole block: one invocation per comparator.
@compute @workgroup_size(GROUP)
fn oe_global_step(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let c = (wid.y * params.tilesX + wid.x) * GROUP + lid;
  if (c >= params.comparators) { return; }
  let logP = params.logs & 0xffu;
  let logK = (params.logs >> 8u) & 0xffu;
  let x = lowerOf(c, logP, logK);
  if (x == 0xffffffffu) { return; }
  let y = x + (1u << logK);
  if (y >= params.n) { return; } // the partner is +infinity: already in order
  let a = data[x];
  let b = data[y];
  if (less(b, a)) {
    data[x] = b;
    data[y] = a;
  }
}
