// DocIDs of a block filled batch by batch: each batch's pairs hold document indexes within the
// batch, and segment k (start, base) says that pairs from `start` up to the next segment's start
// add `base` (the batch's first DocId). One pass before the sort, instead of one on the CPU
// thread that fills the block. The same pass replaces each termID by its key (the term's rank in
// the index's term order), when the block has keys.
struct DocBaseParams {
  n: u32,         // pairs in the block
  segments: u32,  // entries of `segments`, starts ascending, the first 0 (none: no bases)
  stride: u32,    // invocations in the dispatch (the loop's step)
  keyed: u32,     // 1: data[i].x = keys[data[i].x]
}

@group(0) @binding(0) var<storage, read_write> data: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> segments: array<vec2<u32>>;
@group(0) @binding(2) var<uniform> params: DocBaseParams;
@group(0) @binding(3) var<storage, read> keys: array<u32>;

@compute @workgroup_size({{THREADS}})
fn add_doc_base(@builtin(global_invocation_id) gid: vec3<u32>) {
  for (var i = gid.x; i < params.n; i += params.stride) {
    if (params.keyed != 0u) { data[i].x = keys[data[i].x]; }
    if (params.segments == 0u) { continue; }
    // The last segment starting at or before i.
    var lo = 0u;
    var hi = params.segments;
    while (hi - lo > 1u) {
      let mid = (lo + hi) / 2u;
      if (segments[mid].x <= i) { lo = mid; } else { hi = mid; }
    }
    data[i].y += segments[lo].y;
  }
}
