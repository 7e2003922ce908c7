// Adaptive bitonic sort (Bilardi and Nicolau, "Adaptive bitonic sorting: an optimal parallel
// algorithm for shared-memory machines"), in the stream form of Greß and Zachmann, "GPU-ABiSort":
// the block, padded to N = 2^L pairs with +infinity, is sorted in tiles of TILE pairs (the bitonic
// network's local_sort, then ab_nodes: tiles alternately ascending and descending, as bitonic
// trees), then each merge level j = log2(TILE)+1 .. L turns every two sorted runs of 2^(j-1)
// into one of 2^j by the adaptive bitonic merge on bitonic trees, and an in-order traversal
// (ab_traverse) writes the sorted block back.
//
// A bitonic tree of 2^j nodes holds a sequence in in-order (2^j - 1 nodes) plus an extra node
// for its last element. Nodes never move: the merge swaps node values and child pointers. Node
// i starts with the in-order layout of a complete tree (height = trailing ones of i, children
// i -+ 2^(height-1)); heights never change (pointer swaps are between nodes of equal height), so
// only odd nodes have children: kids[i >> 1]. The run of block [b, b + 2^j) has its root at
// b + 2^(j-1) - 1 and its extra at b + 2^j - 1 at every level, so two runs become one bitonic
// tree with no work: the first run's extra is the root of the implicit children.
//
// One La/Ua construction (Zachmann's Algorithm 3) on a tree of 2^s nodes is one invocation
// walking s phases down the tree (phase 0 at the root and extra, then one pair of nodes p, q a
// level). Stage k of a level runs the 2^k constructions of each block at once, on disjoint
// subtrees; its instances' (root, extra) pairs come from the stage before through `stream`
// (GPU-ABiSort's stream of node pointers; here one slot array, written in place). While the
// subtrees are larger than 2^LOCAL_LOG nodes a stage is one dispatch (ab_merge_stage); the last
// LOCAL_LOG stages of a level run in one workgroup per subtree (ab_merge_local) with barriers.
// No invocation ever waits for another workgroup.
//
// Equal pairs would break the search for the split (it needs distinct keys): every value
// carries a unique id, assigned in tile order, as the last word of its key.
struct AbParams {
  n: u32,       // pairs in the block; ranks >= n are padding, never stored
  logs: u32,    // bits 0..7: L = log2 N; bits 8..15: the merge level j; bits 16..23: the stage k
  count: u32,   // units that work: nodes, La/Ua instances, subtrees (ab_merge_local: workgroups), traversal invocations
  groupsX: u32, // workgroups along x (2-D dispatch when there are more than the x limit)
}

@group(0) @binding(0) var<storage, read_write> data: array<vec2<u32>>;
@group(0) @binding(1) var<uniform> params: AbParams;
// Node values: (termID, docID, id), 3 words a node, N nodes.
@group(0) @binding(2) var<storage, read_write> vals: array<u32>;
// (left, right) of odd node i at kids[i >> 1]: N / 2 entries.
@group(0) @binding(3) var<storage, read_write> kids: array<vec2<u32>>;
// (root, extra) of the La/Ua instances of a global stage: N / 2^LOCAL_LOG slots.
@group(0) @binding(4) var<storage, read_write> stream: array<vec2<u32>>;

const SENTINEL = vec2<u32>(0xffffffffu, 0xffffffffu);
const TILE: u32 = {{TILE}}u;
const LOG_TILE: u32 = {{LOG_TILE}}u;
const LOCAL_LOG: u32 = {{LOCAL_LOG}}u;
const LOCAL_THREADS: u32 = {{LOCAL_THREADS}}u; // invocations of ab_merge_local (its last stage has 2^(LOCAL_LOG - 1) instances)
const GROUP: u32 = {{GROUP}}u;
const TRAV_H: u32 = {{TRAV_H}}u; // levels of the subtree one traversal invocation writes

fn load(i: u32) -> vec2<u32> {
  if (i < params.n) { return data[i]; }
  return SENTINEL;
}

fn nodeValue(i: u32) -> vec3<u32> {
  return vec3<u32>(vals[3u * i], vals[3u * i + 1u], vals[3u * i + 2u]);
}

fn setNode(i: u32, v: vec3<u32>) {
  vals[3u * i] = v.x;
  vals[3u * i + 1u] = v.y;
  vals[3u * i + 2u] = v.z;
}

// a comes after b in the merge's direction (ids make keys distinct: never equal).
fn after(a: vec3<u32>, b: vec3<u32>, desc: bool) -> bool {
  let greater = a.x > b.x || (a.x == b.x && (a.y > b.y || (a.y == b.y && a.z > b.z)));
  return greater != desc;
}

// The La/Ua construction on the tree of 2^logSize nodes with root r and extra e: afterwards the
// left subtree of r plus r hold the lower half, the right subtree plus e the upper half.
fn laua(r: u32, e: u32, logSize: u32, desc: bool) {
  let vr = nodeValue(r);
  let ve = nodeValue(e);
  if (after(vr, ve, desc)) {
    setNode(r, ve);
    setNode(e, vr);
    if (logSize > 1u) { kids[r >> 1u] = kids[r >> 1u].yx; }
  }
  if (logSize <= 1u) { return; }
  let rk = kids[r >> 1u];
  var p = rk.x;
  var q = rk.y;
  for (var i = 1u; i < logSize; i++) {
    let vp = nodeValue(p);
    let vq = nodeValue(q);
    let internal = i + 1u < logSize; // p and q are leaves in the last phase
    if (after(vp, vq, desc)) {
      setNode(p, vq);
      setNode(q, vp);
      if (internal) {
        let kp = kids[p >> 1u];
        let kq = kids[q >> 1u];
        kids[p >> 1u] = vec2<u32>(kq.x, kp.y);
        kids[q >> 1u] = vec2<u32>(kp.x, kq.y);
        p = kp.y;
        q = kq.y;
      }
    } else if (internal) {
      p = kids[p >> 1u].x;
      q = kids[q >> 1u].x;
    }
  }
}

// Root and extra of block m of level j (fixed at every level: see the top).
fn blockTree(m: u32, j: u32) -> vec2<u32> {
  let b = m << j;
  return vec2<u32>(b + (1u << (j - 1u)) - 1u, b + (1u << j) - 1u);
}

// After the network's tile sort (local_sort, every tile ascending): node i takes its tile's
// pair i, odd tiles reversed (descending), so that two neighbouring tiles form a bitonic
// sequence; its id is the pair's index in the sorted tile order (so (pair, id) is ordered the
// same way); odd nodes take their implicit children.
@compute @workgroup_size(GROUP)
fn ab_nodes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let node = (wid.y * params.groupsX + wid.x) * GROUP + lid;
  if (node >= params.count) { return; }
  let t = node >> LOG_TILE;
  let src = select(node, (t << LOG_TILE) + TILE - 1u - (node & (TILE - 1u)), (t & 1u) == 1u);
  let v = load(src);
  setNode(node, vec3<u32>(v.x, v.y, src));
  if ((node & 1u) == 1u) {
    let half = 1u << (countTrailingZeros(~node) - 1u);
    kids[node >> 1u] = vec2<u32>(node - half, node + half);
  }
}

// Stage k of level j while the subtrees have more than 2^LOCAL_LOG nodes: one invocation per
// La/Ua instance. Block m's instances use slots m * 2^(j - LOCAL_LOG) + c * 2^(j - LOCAL_LOG - k);
// instance c leaves its children's pairs in its own slot and in one no instance of this stage reads.
@compute @workgroup_size(GROUP)
fn ab_merge_stage(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let g = (wid.y * params.groupsX + wid.x) * GROUP + lid;
  if (g >= params.count) { return; }
  let j = (params.logs >> 8u) & 0xffu;
  let k = (params.logs >> 16u) & 0xffu;
  let m = g >> k;
  let c = g & ((1u << k) - 1u);
  let spread = j - LOCAL_LOG;
  let slot = (m << spread) + (c << (spread - k));
  var re = blockTree(m, j);
  if (k > 0u) { re = stream[slot]; }
  laua(re.x, re.y, j - k, (m & 1u) == 1u);
  let rk = kids[re.x >> 1u];
  stream[slot] = vec2<u32>(rk.x, re.x);
  stream[slot + (1u << (spread - k - 1u))] = vec2<u32>(rk.y, re.y);
}

var<workgroup> inst: array<vec2<u32>, {{LOCAL_SLOTS}}>; // 2^(LOCAL_LOG - 1)

// The last LOCAL_LOG stages of level j on one subtree of 2^LOCAL_LOG nodes per workgroup; the
// instances' pairs stay in workgroup memory, the tree in storage (storageBarrier between stages).
@compute @workgroup_size(LOCAL_THREADS)
fn ab_merge_local(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let w = wid.y * params.groupsX + wid.x;
  if (w >= params.count) { return; } // a 2-D grid's last row runs past the subtrees (uniform: the whole workgroup)
  let j = (params.logs >> 8u) & 0xffu;
  let k0 = j - LOCAL_LOG;
  let m = w >> k0;
  let desc = (m & 1u) == 1u;
  if (lid == 0u) {
    if (k0 == 0u) { inst[0] = blockTree(m, j); } else { inst[0] = stream[w]; }
  }
  workgroupBarrier();
  for (var kk = 0u; kk < LOCAL_LOG; kk++) {
    let logSize = LOCAL_LOG - kk;
    for (var c = lid; c < (1u << kk); c += LOCAL_THREADS) {
      let slot = c << (logSize - 1u);
      let re = inst[slot];
      laua(re.x, re.y, logSize, desc);
      if (logSize > 1u) {
        let rk = kids[re.x >> 1u];
        inst[slot] = vec2<u32>(rk.x, re.x);
        inst[slot + (1u << (logSize - 2u))] = vec2<u32>(rk.y, re.y);
      }
    }
    storageBarrier();
    workgroupBarrier();
  }
}

fn emit(node: u32, rank: u32) {
  if (rank < params.n) { data[rank] = vec2<u32>(vals[3u * node], vals[3u * node + 1u]); }
}

// The in-order traversal of the sorted tree: invocation c walks from the root to the c-th
// subtree of TRAV_H levels, writes its 2^TRAV_H - 1 values at ranks c * 2^TRAV_H onwards, then
// its in-order successor (the last node where the walk turned left, else the extra node).
@compute @workgroup_size(GROUP)
fn ab_traverse(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let c = (wid.y * params.groupsX + wid.x) * GROUP + lid;
  if (c >= params.count) { return; }
  let logN = params.logs & 0xffu;
  let depth = logN - TRAV_H;
  var node = (1u << (logN - 1u)) - 1u;
  var succ = (1u << logN) - 1u;
  for (var d = 0u; d < depth; d++) {
    let kk = kids[node >> 1u];
    if (((c >> (depth - 1u - d)) & 1u) == 0u) {
      succ = node;
      node = kk.x;
    } else {
      node = kk.y;
    }
  }
  var rank = c << TRAV_H;
  var stackNode: array<u32, TRAV_H>;
  var stackDepth: array<u32, TRAV_H>;
  var sp = 0u;
  var cur = node;
  var curDepth = 0u;
  var descending = true;
  loop {
    while (descending) {
      stackNode[sp] = cur;
      stackDepth[sp] = curDepth;
      sp++;
      if (curDepth + 1u < TRAV_H) {
        cur = kids[cur >> 1u].x;
        curDepth++;
      } else {
        descending = false;
      }
    }
    if (sp == 0u) { break; }
    sp--;
    let top = stackNode[sp];
    let topDepth = stackDepth[sp];
    emit(top, rank);
    rank++;
    if (topDepth + 1u < TRAV_H) {
      cur = kids[top >> 1u].y;
      curDepth = topDepth + 1u;
      descending = true;
    }
  }
  emit(succ, rank);
}
