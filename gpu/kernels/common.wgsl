// Shared by every sorting kernel. A pair is vec2<u32>(termID, docID); order is lexicographic.
struct Params {
  n: u32,        // pairs in the block; indexes >= n act as +infinity and are never stored
  threads: u32,  // invocations that do work in this dispatch
  logS: u32,     // global passes: log2 of the smallest step distance of the pass
  tilesX: u32,   // workgroups along x (2-D dispatch when there are more than the x limit)
}

@group(0) @binding(0) var<storage, read_write> data: array<vec2<u32>>;
@group(0) @binding(1) var<uniform> params: Params;

const SENTINEL = vec2<u32>(0xffffffffu, 0xffffffffu);

fn less(a: vec2<u32>, b: vec2<u32>) -> bool {
  return a.x < b.x || (a.x == b.x && a.y < b.y);
}

fn load(i: u32) -> vec2<u32> {
  if (i < params.n) { return data[i]; }
  return SENTINEL;
}
