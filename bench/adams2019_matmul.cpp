#include "bench/adams2019_matmul.h"

#include <chrono>
#include <mutex>

#include "engine/backends/halide/halide_target.h"
#include "engine/core/gemm_problem.h"
#include "engine/backends/halide/halide_program.h"
#include "engine/core/host_facts.h"

namespace tilebank::bench {

using namespace Halide;

Result<std::unique_ptr<engine::Kernel>> BuildAdams2019MatMul(const engine::OpSpec& op, const std::string& plugin,
                                                             double* schedule_seconds) {
  auto problem = engine::AnalyzeGemm(op);
  if (!problem.ok()) return problem.status();
  const engine::GemmProblem& p = problem.value();
  if (op.op_type != "MatMul" || p.batch != 1 || p.trans_a || p.trans_b)
    return Status::InvalidInput("the Adams2019 anchor covers 2-D MatMul only");
  const int M = static_cast<int>(p.M), N = static_cast<int>(p.N), K = static_cast<int>(p.K);
  static std::once_flag loaded;
  try {
    std::call_once(loaded, [&] { load_plugin(plugin); });
    auto start = std::chrono::steady_clock::now();
    auto prog = std::make_shared<engine::HalideProgram>();
    ImageParam A = prog->AddInput(0, 2, "A");  // A(k, m): row-major [M, K]
    ImageParam B = prog->AddInput(1, 2, "B");  // B(n, k)
    Var n("n"), m("m");
    RDom r(0, K, "r");
    Func out("out");
    out(n, m) = 0.f;
    out(n, m) += A(r, m) * B(n, r);
    A.set_estimates({{0, K}, {0, M}});
    B.set_estimates({{0, N}, {0, K}});
    out.set_estimates({{0, N}, {0, M}});
    prog->pipeline = Pipeline(out);
    const auto& host = engine::Host();
    prog->pipeline.auto_schedule("Adams2019", engine::HostHalideTarget(), MachineParams(host.cores, host.l2_bytes, 40));
    prog->pipeline.compile_jit(engine::HostHalideTarget());
    prog->output_extents = {N, M};
    prog->output_shape = op.outputs[0].shape;
    *schedule_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::unique_ptr<engine::Kernel>(new engine::HalideKernel(prog));
  } catch (const Halide::Error& e) {
    return Status::InvalidInput(std::string("Adams2019: ") + e.what());
  }
}

}  // namespace tilebank::bench
