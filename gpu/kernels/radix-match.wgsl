// The match variant of the radix sort's kernels, appended to radix.wgsl where the adapter has
// subgroup operations. Its downsweep ranks a tile's keys by digit with subgroup ballots (the
// warp-level multisplit of Onesweep: Adinets and Merrill, "Onesweep: a faster least significant
// digit radix sort for GPUs"), one round per key of an invocation, instead of the two 4-bit
// splits with a workgroup scan each; then, as in Merrill and Grimshaw's scatter, the tile is
// reordered by digit in workgroup memory and each digit's run is written contiguously.
//
// WGSL does not say which invocations form a subgroup, so the kernels do not assume it: each
// subgroup claims the next warp slot and the next run of logical invocation indexes from a
// workgroup counter, and the tile's keys are laid out by that logical index (a subgroup's keys
// are one contiguous segment of the tile, key j of its lane l at j * size + l). Ranks follow
// tile order (slot, key, lane), so the pass is stable.

const MAXWARPS = {{MAXWARPS}}u; // the most subgroups of a workgroup (WG / the adapter's smallest subgroup)
const PLAN = 8u;                // stats[PLAN + d]: infoOf(d) for d in 0 .. 8
const FAULT = 7u;               // stats[FAULT]: 1 when a workgroup had more subgroups than MAXWARPS

var<workgroup> tileX: array<u32, TILE>;
var<workgroup> tileY: array<u32, TILE>;
// Per subgroup slot and pair of bins (2b, 2b + 1): 16-bit counts (a tile is under 65536 keys).
var<workgroup> warpHist: array<atomic<u32>, MAXWARPS * 128u>;
var<workgroup> warpSums: array<u32, MAXWARPS>;
var<workgroup> layoutCounter: atomic<u32>;
// The upsweep's 8 copies of the histogram (invocation lid counts into copy lid & 7), 257 apart so
// that one bin's copies fall in different banks: a skewed digit does not serialize on one word.
var<workgroup> hist8: array<atomic<u32>, 2056>;

{{MASKS}}

// infoOf(d) as plan_pass wrote it: one load instead of the stats of every digit before d.
fn planOf(d: u32) -> u32 { return atomicLoad(&stats[PLAN + d]); }

// The decisions of every kernel of the sort, once (one workgroup, after stats_pass).
@compute @workgroup_size(16)
fn plan_pass(@builtin(local_invocation_index) lid: u32) {
  if (lid <= 8u) { atomicStore(&stats[PLAN + lid], infoOf(lid)); }
}

// Per tile: how many of its keys fall in each bin of the digit.
@compute @workgroup_size(WG)
fn upsweep_match(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let g = wid.x + wid.y * params.groupsX;
  if (g >= params.groups) { return; }
  if (lid == 0u) { passInfo = {{PASS_INFO}}(digitNo()); }
  for (var c = 0u; c < 8u; c++) { atomicStore(&hist8[c * 257u + lid], 0u); }
  let info = workgroupUniformLoad(&passInfo);
  if ((info & 1u) == 0u) { return; }
  let fromA = (info & 2u) != 0u;
  let d = digitNo();
  let copy = (lid & 7u) * 257u;
  let base = g * TILE;
  // All loads first (in flight together), then the counting.
  var digits: array<u32, KPT>;
  for (var j = 0u; j < KPT; j++) {
    let i = base + j * WG + lid;
    digits[j] = select(256u, digitOf(loadKey(fromA, min(i, params.n - 1u)), d), i < params.n);
  }
  for (var j = 0u; j < KPT; j++) {
    if (digits[j] < 256u) { atomicAdd(&hist8[copy + digits[j]], 1u); }
  }
  workgroupBarrier();
  var sum = 0u;
  for (var c = 0u; c < 8u; c++) { sum += atomicLoad(&hist8[c * 257u + lid]); }
  counts[lid * params.groups + g] = sum;
}

// After scan_counts: the scan ranges' totals become their exclusive prefix (where each range's
// bins start in the output), once, instead of a scan in every downsweep workgroup.
@compute @workgroup_size(WG)
fn scan_ranges(@builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) { passInfo = {{PASS_INFO}}(digitNo()); }
  let info = workgroupUniformLoad(&passInfo);
  if ((info & 1u) == 0u) { return; }
  let ranges = 256u >> rangeShift();
  var total = 0u;
  if (lid < ranges) { total = counts[256u * params.groups + lid]; }
  scratch[lid] = total;
  _ = scanScratch(lid);
  if (lid < ranges) { counts[256u * params.groups + lid] = scratch[lid]; }
}

// Exclusive prefix sum over the workgroup in logical invocation order; `slot` is the caller's
// subgroup slot. Called by every invocation (it holds two barriers).
fn blockExclusiveScan(v: u32, slot: u32) -> u32 {
  let inclusive = subgroupInclusiveAdd(v);
  let total = subgroupAdd(v);
  if (subgroupElect()) { warpSums[slot] = total; }
  workgroupBarrier();
  var before = 0u;
  for (var w = 0u; w < slot; w++) { before += warpSums[w]; }
  workgroupBarrier();
  return before + inclusive - v;
}

@compute @workgroup_size(WG)
fn downsweep_match(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) sgId: u32) {
  let g = wid.x + wid.y * params.groupsX;
  if (g >= params.groups) { return; }
  if (lid == 0u) {
    passInfo = {{PASS_INFO}}(digitNo());
    atomicStore(&layoutCounter, 0u);
  }
  for (var i = lid; i < MAXWARPS * 128u; i += WG) { atomicStore(&warpHist[i], 0u); }
  let info = workgroupUniformLoad(&passInfo);
  if ((info & 1u) == 0u) { return; }
  let fromA = (info & 2u) != 0u;
  let d = digitNo();

  // This subgroup's slot and first logical index (one atomic per subgroup).
  let size = subgroupAdd(1u);
  let lane = subgroupExclusiveAdd(1u);
  var claimed = 0u;
  if (lane == 0u) { claimed = atomicAdd(&layoutCounter, 0x10000u | size); }
  let claim = subgroupBroadcastFirst(claimed);
  let first = claim & 0xffffu;
  // More subgroups than slots cannot happen with full subgroups of at least the adapter's
  // smallest size; if it does, the sorter reports the fault instead of a wrong order.
  if ((claim >> 16u) >= MAXWARPS) { atomicOr(&stats[FAULT], 1u); }
  let slot = min(claim >> 16u, MAXWARPS - 1u);
  let logical = first + lane;

  // Where this tile's keys of each bin start in the output: where the bin's scan range starts
  // (scan_ranges), plus the bins before it in the range and the same bin in earlier tiles.
  bases[lid] = counts[256u * params.groups + (lid >> rangeShift())] + counts[lid * params.groups + g];

  // Rank: round j takes key j of every lane; the lanes with the same digit (peers, from 8
  // ballots) are counted by the lowest of them into the slot's histogram, and each key's rank
  // among its slot's keys of that digit is the count before the round plus its peers below it.
  let tileBase = g * TILE;
  let valid = min(TILE, params.n - tileBase);
  let live = ballot(true);
  let below = lanesBelow(sgId);
  var keys: array<vec2<u32>, KPT>;
  // All loads first (in flight together). Indexes past n get the largest key (bin 255 in every
  // digit): ranked after every real key.
  for (var j = 0u; j < KPT; j++) {
    let p = first * KPT + j * size + lane;
    keys[j] = vec2<u32>(0xffffffffu, 0xffffffffu);
    if (p < valid) { keys[j] = loadKey(fromA, tileBase + p); }
  }
  var ranked: array<u32, KPT>; // rank within the slot's keys of the digit << 8 | digit
  for (var j = 0u; j < KPT; j++) {
    let b = digitOf(keys[j], d);
    var peers = live;
    for (var bit = 0u; bit < 8u; bit++) {
      let one = ((b >> bit) & 1u) != 0u;
      let m = ballot(one);
      peers &= select(~m, m, one);
    }
    let before = popCount(peers & below);
    var prior = 0u;
    if (before == 0u) {
      let shift = (b & 1u) * 16u;
      prior = (atomicAdd(&warpHist[slot * 128u + (b >> 1u)], popCount(peers) << shift) >> shift) & 0xffffu;
    }
    prior = subgroupShuffle(prior, lowestLane(peers));
    ranked[j] = ((prior + before) << 8u) | b;
  }
  workgroupBarrier();

  // Bins 2i and 2i + 1 (logical invocation i < 128): each slot's count becomes the keys of the
  // bin in the slots before it; then the bin's start in the tile is added.
  var pair = 0u;
  if (logical < 128u) {
    for (var w = 0u; w < MAXWARPS; w++) {
      let v = atomicLoad(&warpHist[w * 128u + logical]);
      atomicStore(&warpHist[w * 128u + logical], pair);
      pair += v;
    }
  }
  let low = pair & 0xffffu;
  let pairStart = blockExclusiveScan(low + (pair >> 16u), slot);
  if (logical < 128u) {
    starts[2u * logical] = pairStart;
    starts[2u * logical + 1u] = pairStart + low;
    let add = pairStart | ((pairStart + low) << 16u);
    for (var w = 0u; w < MAXWARPS; w++) { atomicAdd(&warpHist[w * 128u + logical], add); }
  }
  workgroupBarrier();
  for (var j = 0u; j < KPT; j++) {
    let b = ranked[j] & 0xffu;
    let shift = (b & 1u) * 16u;
    let r = (ranked[j] >> 8u) + ((atomicLoad(&warpHist[slot * 128u + (b >> 1u)]) >> shift) & 0xffffu);
    tileX[r] = keys[j].x;
    tileY[r] = keys[j].y;
  }
  workgroupBarrier();
  // The tile in digit order: consecutive invocations write consecutive places of a bin's run.
  for (var j = 0u; j < KPT; j++) {
    let p = j * WG + lid;
    if (p < valid) {
      let k = vec2<u32>(tileX[p], tileY[p]);
      let b = digitOf(k, d);
      storeKey(!fromA, bases[b] + p - starts[b], k);
    }
  }
}
