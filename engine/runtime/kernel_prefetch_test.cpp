// KernelPrefetch on its own: kernels built on the worker are taken once under their key, a job the
// binder reaches first is cancelled, a running one is awaited, a failed build gives nothing.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
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

TEST_CASE("kernel prefetch: built ahead in order, taken once by key, settled jobs awaited") {
  std::atomic<int> built{0};
  KernelPrefetch prefetch;
  for (int k = 0; k < 4; ++k) prefetch.Add("k" + std::to_string(k), {k}, Making(k, &built));
  prefetch.Start(1, /*wait_for_pending=*/true);  // every job built on the worker
  for (int k = 3; k >= 0; --k) prefetch.Settle(k);  // each is done after its Settle
  int taken = 0;
  for (int k = 0; k < 4; ++k)
    if (auto kernel = prefetch.Take("k" + std::to_string(k))) {
      CHECK(static_cast<NamedKernel*>(kernel.get())->id == k);
      ++taken;
      CHECK(prefetch.Take("k" + std::to_string(k)) == nullptr);  // once
    }
  CHECK(taken == 4);
  CHECK(built.load() == 4);
  CHECK(prefetch.taken() == 4u);
  CHECK(prefetch.Take("unknown") == nullptr);
}

TEST_CASE("kernel prefetch: a job the binder settles before the worker reaches it is never built") {
  std::atomic<int> built{0};
  KernelPrefetch prefetch;
  std::atomic<bool> release{false};
  // The worker takes the second job (every other one) and holds it until released: the first and
  // the third are the binder's.
  prefetch.Add("first", {0}, Making(0, &built));
  prefetch.Add("held", {1}, [&]() -> Result<std::unique_ptr<Kernel>> {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return std::unique_ptr<Kernel>(new NamedKernel(1));
  });
  prefetch.Add("third", {2}, Making(2, &built));
  prefetch.Start(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  prefetch.Settle(0);  // the binder's: cancelled
  CHECK(prefetch.Take("first") == nullptr);
  release = true;
  prefetch.Settle(1);  // running: awaited
  auto held = prefetch.Take("held");
  REQUIRE(held != nullptr);
  CHECK(static_cast<NamedKernel*>(held.get())->id == 1);
  prefetch.Settle(2);
  CHECK(prefetch.Take("third") == nullptr);
  CHECK(built.load() == 0);

}

// Polls until `done` holds or a second has passed.
bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 1000 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return done();
}

TEST_CASE("kernel prefetch: the worker stays at most kLookahead jobs ahead of the binder") {
  std::atomic<int> built{0};
  KernelPrefetch prefetch;
  // Jobs 1, 3, 5, ... are the worker's; before the binder reaches any, those below kLookahead.
  for (int k = 0; k < 12; ++k) prefetch.Add("k" + std::to_string(k), {k}, Making(k, &built));
  prefetch.Start(1);
  const int window = static_cast<int>(KernelPrefetch::kLookahead) / 2;  // odd indices below kLookahead
  CHECK(Eventually([&] { return built.load() == window; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(built.load() == window);  // and no further
  for (int k = 0; k < 3; ++k) prefetch.Settle(k);  // the binder is at the fourth job: the window moves by three
  const int moved = static_cast<int>(3 + KernelPrefetch::kLookahead) / 2;  // odd indices below 3 + kLookahead
  CHECK(Eventually([&] { return built.load() == moved; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(built.load() == moved);
  CHECK(prefetch.Take("k1") != nullptr);
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
