// A global Γ-partition pass: each invocation owns 2^M pairs whose indexes differ only in the
// M step bits of this pass (bits logS .. logS+M-1); it loads them into registers, runs the
// M network steps (generated straight-line compare-exchanges below), and stores them back.
// Invocation t supplies the bits below logS, so consecutive invocations touch consecutive
// addresses. For a pass that starts with the stage's flip, the upper half of each k-block is
// addressed mirrored (k-1-offset) so that flip partners are owned by the same invocation.

const M: u32 = {{M}}u;
const GROUP: u32 = {{GROUP}}u;

@compute @workgroup_size(GROUP)
fn global_pass(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = (wid.y * params.tilesX + wid.x) * GROUP + lid;
  if (t >= params.threads) { return; }
  let S = 1u << params.logS;
  let low = t & (S - 1u);
  let kbase = (t >> params.logS) << (params.logS + M);
{{BODY}}
}
