#include "engine/backends/halide/gemm_schedule.h"

#include <algorithm>

#include "engine/core/host_facts.h"

namespace tilebank::engine {

using namespace Halide;

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Whether the knobs fit the register file and the shape (the splits shift inwards, so a tile or
// block may not exceed its dimension unless B is packed, which pads N).
bool GemmPolicyValid(const GemmShape& s, const Policy& p) {
  const HostFacts& host = Host();
  int64_t vb = IntKnob(p, "vec_blocks", 1), tm = IntKnob(p, "tile_m", 1);
  int64_t bn = IntKnob(p, "block_n", 1), bm = IntKnob(p, "block_m", 1);
  int64_t tn = vb * host.vector_floats;
  bool packed = TextKnob(p, "pack_b", "none") != "none";
  if (vb * tm + vb + 1 > host.vector_registers) return false;
  if (tm > s.M) return false;
  if (bm > 1 && bm * tm > s.M) return false;
  if (packed) {
    if (bn > 1 && bn > CeilDiv(s.N, tn)) return false;
    if (vb > 1 && (vb - 1) * host.vector_floats >= s.N) return false;  // a whole vector of padding
  } else {
    // Plain B is read in place: blocks must tile N exactly.
    if (s.N % (bn * tn) != 0) return false;
  }
  if (IntKnob(p, "unroll_k", 1) > s.K) return false;
  return true;
}

}  // namespace

SearchSpace GemmSpace(const GemmShape& shape) {
  SearchSpace space;
  space.knobs = {
      {"vec_blocks", IntValues({1, 2, 3, 4}), TuneMode::kSchedule},
      {"tile_m", IntValues({1, 2, 3, 4, 6, 8, 12}), TuneMode::kSchedule},
      {"block_n", IntValues({1, 2, 4, 8, 16}), TuneMode::kSchedule},
      {"block_m", IntValues({1, 2, 4, 8, 16, 32}), TuneMode::kSchedule},
      {"unroll_k", IntValues({1, 2, 4}), TuneMode::kSchedule},
      {"loop_order", {std::string("mn"), std::string("nm")}, TuneMode::kSchedule},
      {"parallel", IntValues({0, 1}), TuneMode::kSchedule},
      {"pack_b", {std::string("none"), std::string("block"), std::string("root")}, TuneMode::kFormat},
  };
  if (shape.trans_a) space.knobs.push_back({"pack_a", {std::string("none"), std::string("root")}, TuneMode::kFormat});
  space.valid = [shape](const Policy& p) { return GemmPolicyValid(shape, p); };
  return space;
}

Policy GemmDefaultPolicy(const GemmShape& s) {
  const HostFacts& host = Host();
  const int V = host.vector_floats;
  // Register tile: the widest of 2 (or 3 with 16 registers) vectors whose rows fit the register file.
  int64_t vb = host.vector_registers >= 32 ? 2 : 3;
  while (vb > 1 && (vb - 1) * V >= s.N) --vb;  // no whole vector of padding (GemmPolicyValid)
  bool packed = s.N % (vb * V) != 0 || s.N < vb * V || s.N >= 64;
  while (vb > 1 && !packed && vb * V > s.N) --vb;
  int64_t tm = 1;
  for (int64_t t : {12, 8, 6, 4, 3, 2, 1})
    if (vb * t + vb + 1 <= host.vector_registers && t <= s.M) { tm = t; break; }
  const int64_t tn = vb * V;
  // Cache blocks: a K x block_n panel of B in half of L2, a block_m x K slice of A in half of L1.
  int64_t bn = std::clamp<int64_t>(host.l2_bytes / 2 / (4 * std::max(1, s.K)) / tn, 1, 16);
  int64_t bm = std::clamp<int64_t>(host.l1_bytes / 2 / (4 * std::max(1, s.K)) / tm, 1, 32);
  auto pow2_floor = [](int64_t x) { int64_t p = 1; while (p * 2 <= x) p *= 2; return p; };
  bn = pow2_floor(bn);
  bm = pow2_floor(bm);
  while (bn > 1 && (packed ? bn > CeilDiv(s.N, tn) : bn * tn > s.N)) bn /= 2;
  while (bm > 1 && bm * tm > s.M) bm /= 2;
  double flops = 2.0 * s.M * s.N * s.K * s.batch;
  std::vector<Knob> knobs = {
      {"vec_blocks", vb}, {"tile_m", tm}, {"block_n", bn}, {"block_m", bm}, {"unroll_k", int64_t{1}},
      {"loop_order", std::string("mn")}, {"parallel", int64_t{flops > 2e6 ? 1 : 0}},
      {"pack_b", std::string(packed ? "block" : "none")},
  };
  if (s.trans_a) knobs.push_back({"pack_a", std::string("root")});
  return MakePolicy(knobs);
}

GemmPanels GemmPanelsOf(const Policy& policy, int N) {
  const int width = static_cast<int>(IntKnob(policy, "vec_blocks", 1)) * Host().vector_floats;
  const int per_block = static_cast<int>(IntKnob(policy, "block_n", 1));
  return {width, static_cast<int>(CeilDiv(N, int64_t{width} * per_block)) * per_block};
}

Halide::Buffer<float> PackBPanels(const Tensor& b, int K, int N, GemmPanels panels, bool trans_b) {
  const int width = panels.width;
  const int batches = static_cast<int>(b.size() / (static_cast<int64_t>(K) * N));
  Halide::Buffer<float> packed(width, K, panels.count, batches);
  const float* src = b.data.data();
  for (int bb = 0; bb < batches; ++bb) {
    const float* matrix = src + static_cast<int64_t>(bb) * K * N;
    for (int po = 0; po < panels.count; ++po)
      for (int k = 0; k < K; ++k) {
        float* dst = &packed(0, k, po, bb);
        for (int i = 0; i < width; ++i) {
          const int64_t n = std::min(po * width + i, N - 1);
          dst[i] = trans_b ? matrix[n * K + k] : matrix[k * static_cast<int64_t>(N) + n];
        }
      }
  }
  return packed;
}

Func ScheduledGemm(Func a, Func bmat, const GemmShape& s, const Policy& p, const GemmEpilogue& epilogue, Func b_panels) {
  const int V = Host().vector_floats;
  const int vb = static_cast<int>(IntKnob(p, "vec_blocks", 1));
  const int tm = static_cast<int>(IntKnob(p, "tile_m", 1));
  const int tn = vb * V;
  const std::string pack_b = TextKnob(p, "pack_b", "none");
  const bool packed = pack_b != "none";
  const int bn = static_cast<int>(IntKnob(p, "block_n", 1)) * tn;
  const int bm = static_cast<int>(IntKnob(p, "block_m", 1)) * tm;
  const int uk = static_cast<int>(IntKnob(p, "unroll_k", 1));
  const bool parallel = IntKnob(p, "parallel", 0) != 0;
  const bool n_inner = TextKnob(p, "loop_order", "mn") == "mn";

  Var n("n"), m("m"), b("b");
  RDom r(0, s.K, "k");
  Func a_src = a;
  if (TextKnob(p, "pack_a", "none") == "root") {
    a_src = Func("a_packed");
    Var k("ka");
    a_src(k, m, b) = a(k, m, b);
    a_src.compute_root().reorder(m, k, b).vectorize(m, V, TailStrategy::GuardWithIf);
  }
  Func acc("acc"), out("gemm");
  const bool prepacked = b_panels.defined();
  Func panel = prepacked ? b_panels : Func("b_panel");
  Var pi("pi"), pk("pk"), po("po");
  acc(n, m, b) = 0.f;
  if (prepacked) {
    acc(n, m, b) += a_src(r, m, b) * panel(n % tn, r, n / tn, b);
  } else if (packed) {
    Expr col = po * tn + pi;
    if (s.N % tn != 0) col = min(col, s.N - 1);
    panel(pi, pk, po, b) = bmat(col, pk, b);
    acc(n, m, b) += a_src(r, m, b) * panel(n % tn, r, n / tn, b);
  } else {
    acc(n, m, b) += a_src(r, m, b) * bmat(n, r, b);
  }
  out(n, m, b) = epilogue(acc(n, m, b), n, m, b);

  Var no("no"), mo("mo"), ni("ni"), mi("mi"), nt("nt"), mt("mt"), nv("nv"), mr("mr"), blk("blk");
  const TailStrategy n_tail = packed ? TailStrategy::GuardWithIf : TailStrategy::ShiftInwards;
  out.bound(n, 0, s.N).bound(m, 0, s.M).bound(b, 0, s.batch);
  out.split(n, no, ni, bn, n_tail).split(m, mo, mi, bm, TailStrategy::ShiftInwards);
  out.split(ni, nt, nv, tn, n_tail).split(mi, mt, mr, tm, TailStrategy::ShiftInwards);
  if (n_inner) out.reorder(nv, mr, nt, mt, no, mo, b).fuse(no, mo, blk);
  else out.reorder(nv, mr, nt, mt, mo, no, b).fuse(mo, no, blk);
  out.fuse(blk, b, blk);
  if (parallel) out.parallel(blk);
  out.vectorize(nv, V).unroll(mr);

  // The accumulator is one register tile, tn x tm, also where a guarded tail of N leaves fewer
  // columns to store: left to bounds inference, some tilings of a packed B with such a tail
  // (16x64x96: 4 vectors x 4 rows, block_m 4) computed wrong results or wrote past the tile.
  acc.compute_at(out, nt).bound_extent(n, tn).bound_extent(m, tm).vectorize(n, V).unroll(n).unroll(m);
  auto update = acc.update();
  update.reorder(n, m, r).vectorize(n, V).unroll(n).unroll(m);
  if (uk > 1) update.unroll(r, uk);

  if (packed && !prepacked) {
    panel.bound(pi, 0, tn);
    if (pack_b == "root") {
      panel.compute_root().reorder(pi, pk, po, b).vectorize(pi, V).unroll(pi);
      if (parallel) panel.parallel(po);
    } else {
      panel.compute_at(out, blk).reorder(pi, pk, po, b).vectorize(pi, V).unroll(pi);
    }
  }
  return out;
}

}  // namespace tilebank::engine
