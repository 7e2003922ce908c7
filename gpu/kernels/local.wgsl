// Γ0 partitions: a workgroup loads a tile of TILE pairs into workgroup memory, runs network
// steps there with a barrier after each, and stores the tile back (coalesced both ways).
//   local_sort:  stages 2 .. TILE (all steps, flips included)
//   local_merge: the last log2(TILE) steps (j = TILE/2 .. 1) of a stage k > TILE

const TILE: u32 = {{TILE}}u;
const THREADS: u32 = {{THREADS}}u;

var<workgroup> tile: array<vec2<u32>, TILE>;

fn cas_tile(i: u32, p: u32) {
  let a = tile[i];
  let b = tile[p];
  if (less(b, a)) {
    tile[i] = b;
    tile[p] = a;
  }
}

fn load_tile(base: u32, lid: u32) {
  for (var e = lid; e < TILE; e += THREADS) { tile[e] = load(base + e); }
  workgroupBarrier();
}

fn store_tile(base: u32, lid: u32) {
  workgroupBarrier();
  for (var e = lid; e < TILE; e += THREADS) {
    if (base + e < params.n) { data[base + e] = tile[e]; }
  }
}

// One network step over the tile: pair p gets index i (bit log2(j) cleared) and its partner.
fn tile_step(lid: u32, k: u32, j: u32) {
  for (var p = lid; p < TILE / 2u; p += THREADS) {
    let i = ((p & ~(j - 1u)) << 1u) | (p & (j - 1u));
    var partner = i + j;
    if (j == k >> 1u) { partner = i ^ (k - 1u); }  // the stage's flip step
    cas_tile(i, partner);
  }
  workgroupBarrier();
}

@compute @workgroup_size(THREADS)
fn local_sort(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let base = (wid.y * params.tilesX + wid.x) * TILE;
  load_tile(base, lid);
  for (var k = 2u; k <= TILE; k <<= 1u) {
    for (var j = k >> 1u; j > 0u; j >>= 1u) { tile_step(lid, k, j); }
  }
  store_tile(base, lid);
}

@compute @workgroup_size(THREADS)
fn local_merge(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let base = (wid.y * params.tilesX + wid.x) * TILE;
  load_tile(base, lid);
  // k > TILE here, so no step is a flip: pass k = 0 (k >> 1 never equals j).
  for (var j = TILE >> 1u; j > 0u; j >>= 1u) { tile_step(lid, 0u, j); }
  store_tile(base, lid);
}
