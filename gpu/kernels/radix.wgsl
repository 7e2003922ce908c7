{{ENABLE}}
// LSD radix sort of (termID, docID) pairs as 64-bit keys, 8 bits per digit, reduce-then-scan
// (Merrill and Grimshaw, "Revisiting sorting for GPGPU stream architectures"): each digit pass
// is an upsweep (per-tile digit counts), a scan of the counts, and a downsweep (stable rank in
// the tile, scatter). No workgroup waits on another (WebGPU promises no forward progress
// between workgroups). Digit d < 4 is byte d of the docID, digit d >= 4 byte d - 4 of the termID.
//
// `stats` decides on the GPU which digit passes run: a digit whose bits are equal in every key
// leaves the order unchanged, and when the docIDs already ascend in block order the docID
// digits are skipped (LSD passes are stable, so sorting by termID alone gives (termID, docID)
// order). Passes alternate between keysA and keysB; a skipped pass does not flip them, so every
// kernel works out from the stats where its input lies. The sorted block ends in keysA
// (copy_back moves it there after an odd number of passes).
struct Params {
  n: u32,        // pairs in the block
  groups: u32,   // tiles (upsweep, downsweep workgroups)
  digit: u32,    // bits 0..7: the digit (0..7); bits 8..15: log2 of the bins per scan range
  groupsX: u32,  // workgroups along x (2-D dispatch when there are more than the x limit)
}

@group(0) @binding(0) var<storage, read_write> keysA: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read_write> keysB: array<vec2<u32>>;
// Bin-major tile counts: counts[bin * groups + tile]; after the scan their exclusive prefix
// within the scan workgroup's range of bins, and counts[256 * groups + r] range r's total.
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
// [OR of termIDs, AND of termIDs, OR of docIDs, AND of docIDs, docID descents]; the match
// kernels (radix-match.wgsl) add a layout fault flag at 7 and the pass plan at 8 .. 16.
@group(0) @binding(3) var<storage, read_write> stats: array<atomic<u32>, {{STATS_LEN}}>;
@group(0) @binding(4) var<uniform> params: Params;

const WG = {{WG}}u;          // invocations per workgroup; also the number of bins (256)
const KPT = {{KPT}}u;        // keys per invocation in a tile
const TILE = {{TILE}}u;      // WG * KPT
const SMEM = {{SMEM}}u;      // words of the shared tile: max(2 * TILE, 8 * WG)
const STATS_GROUPS = {{STATS_GROUPS}}u;

var<workgroup> passInfo: u32; // bit 0: this digit pass runs; bit 1: its input is keysA
var<workgroup> smem: array<u32, SMEM>;
var<workgroup> scratch: array<u32, WG>;
var<workgroup> bases: array<u32, 256>;
var<workgroup> starts: array<u32, 256>;
var<workgroup> hist: array<atomic<u32>, 256>;
var<workgroup> red: array<atomic<u32>, 5>;

fn digitRuns(d: u32) -> bool {
  let isDoc = d < 4u;
  let orW = atomicLoad(&stats[select(0u, 2u, isDoc)]);
  let andW = atomicLoad(&stats[select(1u, 3u, isDoc)]);
  let changing = ((orW ^ andW) >> ((d & 3u) * 8u)) & 0xffu;
  if (isDoc && atomicLoad(&stats[4]) == 0u) { return false; }
  return changing != 0u;
}

// bit 0: digit d runs (d < 8); bit 1: its input is keysA (an even number of passes ran before it).
fn infoOf(d: u32) -> u32 {
  var before = 0u;
  for (var e = 0u; e < d; e++) { if (digitRuns(e)) { before++; } }
  let runs = d < 8u && digitRuns(d);
  return select(0u, 1u, runs) | select(0u, 2u, (before & 1u) == 0u);
}

fn digitOf(k: vec2<u32>, d: u32) -> u32 {
  let w = select(k.x, k.y, d < 4u);
  return (w >> ((d & 3u) * 8u)) & 0xffu;
}

fn loadKey(fromA: bool, i: u32) -> vec2<u32> {
  if (fromA) { return keysA[i]; }
  return keysB[i];
}

fn storeKey(toA: bool, i: u32, k: vec2<u32>) {
  if (toA) { keysA[i] = k; } else { keysB[i] = k; }
}

// Exclusive prefix sum of scratch[0 .. WG) in place; returns the total. Called by every invocation.
fn scanScratch(lid: u32) -> u32 {
  for (var off = 1u; off < WG; off <<= 1u) {
    workgroupBarrier();
    var v = scratch[lid];
    if (lid >= off) { v += scratch[lid - off]; }
    workgroupBarrier();
    scratch[lid] = v;
  }
  workgroupBarrier();
  let total = scratch[WG - 1u];
  let before = select(0u, scratch[max(lid, 1u) - 1u], lid > 0u);
  workgroupBarrier();
  scratch[lid] = before; // inclusive -> exclusive
  workgroupBarrier();
  return total;
}

// OR / AND of both words and whether any docID is smaller than the one before it.
@compute @workgroup_size(WG)
fn stats_pass(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  // OR accumulators start at 0, AND accumulators (1 and 3) at all ones.
  if (lid < 5u) { atomicStore(&red[lid], select(0u, 0xffffffffu, lid == 1u || lid == 3u)); }
  workgroupBarrier();
  var orT = 0u;
  var andT = 0xffffffffu;
  var orD = 0u;
  var andD = 0xffffffffu;
  var descents = 0u;
  for (var i = gid.x; i < params.n; i += STATS_GROUPS * WG) {
    let k = keysA[i];
    orT |= k.x;
    andT &= k.x;
    orD |= k.y;
    andD &= k.y;
    if (i > 0u && k.y < keysA[i - 1u].y) { descents = 1u; }
  }
{{STATS_REDUCE}}
  workgroupBarrier();
  if (lid == 0u) {
    atomicOr(&stats[0], atomicLoad(&red[0]));
    atomicAnd(&stats[1], atomicLoad(&red[1]));
    atomicOr(&stats[2], atomicLoad(&red[2]));
    atomicAnd(&stats[3], atomicLoad(&red[3]));
    atomicOr(&stats[4], atomicLoad(&red[4]));
  }
}

// Per tile: how many of its keys fall in each bin of the digit.
@compute @workgroup_size(WG)
fn upsweep(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let g = wid.x + wid.y * params.groupsX;
  if (g >= params.groups) { return; }
  if (lid == 0u) { passInfo = {{PASS_INFO}}(digitNo()); }
  let info = workgroupUniformLoad(&passInfo);
  if ((info & 1u) == 0u) { return; }
  let fromA = (info & 2u) != 0u;
  atomicStore(&hist[lid], 0u);
  workgroupBarrier();
  let base = g * TILE;
  for (var j = 0u; j < KPT; j++) {
    let i = base + j * WG + lid;
    if (i < params.n) { atomicAdd(&hist[digitOf(loadKey(fromA, i), digitNo())], 1u); }
  }
  workgroupBarrier();
  counts[lid * params.groups + g] = atomicLoad(&hist[lid]);
}

// The scan's workgroups (ranges) each take 256 >> rangeShift consecutive bins (a few thousand
// counts), so a small block is one workgroup and a large one spreads over up to 256. The host
// sends log2 of the bins per range in params.digit's bits 8..15.
fn rangeShift() -> u32 { return (params.digit >> 8u) & 0xffu; }
fn digitNo() -> u32 { return params.digit & 0xffu; }

// Workgroup r: the exclusive prefix of its range of bin-major counts, in place, and the range's
// total (at counts[256 * groups + r]).
@compute @workgroup_size(WG)
fn scan_counts(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) { passInfo = {{PASS_INFO}}(digitNo()); }
  let info = workgroupUniformLoad(&passInfo);
  if ((info & 1u) == 0u) { return; }
  let len = (1u << rangeShift()) * params.groups;
  let first = wid.x * len;
  var carry = 0u;
  for (var chunk = 0u; chunk < len; chunk += WG * 4u) {
    var v: array<u32, 4>;
    var sum = 0u;
    for (var e = 0u; e < 4u; e++) {
      let t = chunk + lid * 4u + e;
      v[e] = select(0u, counts[first + min(t, len - 1u)], t < len);
      sum += v[e];
    }
    scratch[lid] = sum;
    let total = scanScratch(lid);
    var run = carry + scratch[lid];
    for (var e = 0u; e < 4u; e++) {
      let t = chunk + lid * 4u + e;
      if (t < len) { counts[first + t] = run; }
      run += v[e];
    }
    carry += total;
  }
  if (lid == 0u) { counts[256u * params.groups + wid.x] = carry; }
}

// Per tile: rank each key stably by the digit (two 4-bit splits with per-invocation counters
// in shared memory, the tile reordered there), then write each to its bin's place.
@compute @workgroup_size(WG)
fn downsweep(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let g = wid.x + wid.y * params.groupsX;
  if (g >= params.groups) { return; }
  if (lid == 0u) { passInfo = {{PASS_INFO}}(digitNo()); }
  let info = workgroupUniformLoad(&passInfo);
  if ((info & 1u) == 0u) { return; }
  let fromA = (info & 2u) != 0u;
  let d = digitNo();

  // Where this tile's keys of each bin start in the output: the bins before it in the whole
  // block, plus the same bin in the tiles before this one.
  let ranges = 256u >> rangeShift();
  var rangeTotal = 0u;
  if (lid < ranges) { rangeTotal = counts[256u * params.groups + lid]; }
  scratch[lid] = rangeTotal;
  _ = scanScratch(lid);
  bases[lid] = scratch[lid >> rangeShift()] + counts[lid * params.groups + g];

  // Load the tile, coalesced; indexes past n get the largest key (bin 255 in every digit).
  let base = g * TILE;
  let valid = min(TILE, params.n - base);
  for (var j = 0u; j < KPT; j++) {
    let p = j * WG + lid;
    var k = vec2<u32>(0xffffffffu, 0xffffffffu);
    if (p < valid) { k = loadKey(fromA, base + p); }
    smem[2u * p] = k.x;
    smem[2u * p + 1u] = k.y;
  }
  workgroupBarrier();
  var keys: array<vec2<u32>, KPT>;
  for (var j = 0u; j < KPT; j++) {
    let p = lid * KPT + j; // blocked: invocation lid holds tile positions lid*KPT .. +KPT
    keys[j] = vec2<u32>(smem[2u * p], smem[2u * p + 1u]);
  }

  for (var half = 0u; half < 2u; half++) {
    workgroupBarrier();
    // 16 counters per invocation, two 16-bit halves of 8 words: word w at smem[w * WG + lid]
    // holds sub-digit w (low half) and w + 8 (high half).
    for (var w = 0u; w < 8u; w++) { smem[w * WG + lid] = 0u; }
    var seen: array<u32, KPT>;
    for (var j = 0u; j < KPT; j++) {
      let s = (digitOf(keys[j], d) >> (4u * half)) & 15u;
      let at = (s & 7u) * WG + lid;
      let sh = (s >> 3u) * 16u;
      seen[j] = (smem[at] >> sh) & 0xffffu;
      smem[at] += 1u << sh;
    }
    workgroupBarrier();
    // Exclusive scan of the 8 * WG counter words in (word, invocation) order: for each
    // sub-digit and invocation, the keys of smaller sub-digits plus those of the same
    // sub-digit held by earlier invocations. Invocation lid scans words 8*lid .. 8*lid + 7.
    var mine: array<u32, 8>;
    var sum = 0u;
    for (var e = 0u; e < 8u; e++) {
      mine[e] = smem[8u * lid + e];
      sum += mine[e];
    }
    scratch[lid] = sum;
    let total = scanScratch(lid);
    var run = scratch[lid];
    for (var e = 0u; e < 8u; e++) {
      smem[8u * lid + e] = run;
      run += mine[e];
    }
    workgroupBarrier();
    // The high halves (sub-digits 8..15) come after every key of sub-digits 0..7.
    let lowTotal = total & 0xffffu;
    var rank: array<u32, KPT>;
    for (var j = 0u; j < KPT; j++) {
      let s = (digitOf(keys[j], d) >> (4u * half)) & 15u;
      let sh = (s >> 3u) * 16u;
      rank[j] = ((smem[(s & 7u) * WG + lid] >> sh) & 0xffffu) + select(0u, lowTotal, s >= 8u) + seen[j];
    }
    workgroupBarrier();
    for (var j = 0u; j < KPT; j++) {
      smem[2u * rank[j]] = keys[j].x;
      smem[2u * rank[j] + 1u] = keys[j].y;
    }
    workgroupBarrier();
    if (half == 0u) {
      for (var j = 0u; j < KPT; j++) {
        let p = lid * KPT + j;
        keys[j] = vec2<u32>(smem[2u * p], smem[2u * p + 1u]);
      }
    }
  }

  // The tile is now ordered by digit in smem: where each bin starts in it.
  for (var j = 0u; j < KPT; j++) {
    let p = j * WG + lid;
    let b = digitOf(vec2<u32>(smem[2u * p], smem[2u * p + 1u]), d);
    let q = max(p, 1u) - 1u;
    if (p == 0u || b != digitOf(vec2<u32>(smem[2u * q], smem[2u * q + 1u]), d)) { starts[b] = p; }
  }
  workgroupBarrier();
  // The padding keys are the last TILE - valid of the tile (bin 255, after every real key).
  for (var j = 0u; j < KPT; j++) {
    let p = j * WG + lid;
    if (p < valid) {
      let k = vec2<u32>(smem[2u * p], smem[2u * p + 1u]);
      let b = digitOf(k, d);
      storeKey(!fromA, bases[b] + p - starts[b], k);
    }
  }
}

// After an odd number of digit passes the sorted block is in keysB: copy it to keysA.
@compute @workgroup_size(WG)
fn copy_back(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) { passInfo = {{PASS_INFO}}(8u); }
  let info = workgroupUniformLoad(&passInfo);
  if ((info & 2u) != 0u) { return; }
  for (var i = gid.x; i < params.n; i += STATS_GROUPS * WG) { keysA[i] = keysB[i]; }
}
