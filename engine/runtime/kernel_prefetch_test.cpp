// KernelPrefetch on its own: kernels built on the worker are taken once under their key, a job the
// binder reaches first is cancelled, a running one is awaited, a failed build gives nothing.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine/runtime/kernel_prefetch.h"

namespace tilebank::engine::model {
namespace {

class NamedKernel : public Kernel {
 public:
  explicit NamedKernel(int id) : id(id) {}
  Status Prepare(const std::vector<const Tensor*>&) override { return Status::Ok(); }
  Status Run() override { return Status::Ok(); }
  Status Fetch(Tensor*) override { return Status::Ok(); }
  int id;
};

KernelPrefetch::Build Making(int id, std::atomic<int>* built) {
  return [id, built]() -> Result<std::unique_ptr<Kernel>> {
    ++*built;
    return std::unique_ptr<Kernel>(new NamedKernel(id));
  };
}

TEST_CASE("kernel prefetch: built ahead from the end, taken once by key, settled jobs awaited") {
  std::atomic<int> built{0};
  KernelPrefetch prefetch;
  for (int k = 0; k < 4; ++k) prefetch.Add("k" + std::to_string(k), {k}, Making(k, &built));
  prefetch.Start(1);
  for (int k = 3; k >= 0; --k) prefetch.Settle(k);  // each is done or cancelled after its Settle
  int taken = 0;
  for (int k = 0; k < 4; ++k)
    if (auto kernel = prefetch.Take("k" + std::to_string(k))) {
      CHECK(static_cast<NamedKernel*>(kernel.get())->id == k);
      ++taken;
      CHECK(prefetch.Take("k" + std::to_string(k)) == nullptr);  // once
    }
  CHECK(taken == built.load());
  CHECK(prefetch.taken() == static_cast<size_t>(taken));
  CHECK(prefetch.Take("unknown") == nullptr);
}

TEST_CASE("kernel prefetch: a job the binder settles before the worker reaches it is never built") {
  std::atomic<int> built{0};
  KernelPrefetch prefetch;
  std::atomic<bool> release{false};
  // The worker takes the last job first and holds it until released: the first job stays pending.
  prefetch.Add("first", {0}, Making(0, &built));
  prefetch.Add("held", {1}, [&]() -> Result<std::unique_ptr<Kernel>> {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return std::unique_ptr<Kernel>(new NamedKernel(1));
  });
  prefetch.Start(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  prefetch.Settle(0);  // pending: cancelled
  CHECK(prefetch.Take("first") == nullptr);
  release = true;
  prefetch.Settle(1);  // running: awaited
  auto held = prefetch.Take("held");
  REQUIRE(held != nullptr);
  CHECK(static_cast<NamedKernel*>(held.get())->id == 1);
  CHECK(built.load() == 0);
}

TEST_CASE("kernel prefetch: a failed or throwing build leaves the binder to build it") {
  KernelPrefetch prefetch;
  prefetch.Add("fails", {0}, []() -> Result<std::unique_ptr<Kernel>> { return Status::InvalidInput("no"); });
  prefetch.Add("throws", {1}, []() -> Result<std::unique_ptr<Kernel>> { throw std::runtime_error("oneDNN"); });
  prefetch.Start(1);
  prefetch.Settle(0);
  prefetch.Settle(1);
  CHECK(prefetch.Take("fails") == nullptr);
  CHECK(prefetch.Take("throws") == nullptr);
}

}  // namespace
}  // namespace tilebank::engine::model
