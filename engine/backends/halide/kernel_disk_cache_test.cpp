#include "engine/backends/halide/kernel_disk_cache.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "engine/backends/halide/halide_target.h"
#include "tests/test_support.h"

namespace tilebank::engine {
namespace {

// out(x) = 2 * in(x) + 1, vectorized and parallel (so the shared runtime's thread pool runs it).
Halide::Pipeline TwicePlusOne(Halide::ImageParam in) {
  Halide::Func out("out");
  Halide::Var x("x"), xo("xo"), xi("xi");
  out(x) = 2.f * in(x) + 1.f;
  out.split(x, xo, xi, 64).parallel(xo).vectorize(xi, 16);
  return Halide::Pipeline(out);
}

int Call(ArgvEntry entry, Halide::Buffer<float>& in, Halide::Buffer<float>& out) {
  void* args[] = {in.raw_buffer(), out.raw_buffer()};
  return entry(args);
}

TEST_CASE("the kernel disk cache compiles a pipeline once, and another process (cache object) loads it without compiling") {
  testing::TempDir dir;
  const std::string cache_dir = dir.path() + "/kernels";
  Halide::ImageParam in(Halide::Float(32), 1, "in");
  Halide::Buffer<float> input(1024), output(1024);
  for (int i = 0; i < 1024; ++i) input(i) = static_cast<float>(i);

  KernelDiskCache first(cache_dir);
  auto entry = first.Load(42, TwicePlusOne(in), {in}, HostHalideTarget());
  REQUIRE(entry.ok());
  CHECK(first.stats().compiled == 1);
  CHECK(first.stats().loaded == 0);
  CHECK(first.dir().rfind(cache_dir + "/", 0) == 0);
  CHECK(first.dir().size() > cache_dir.size() + 16);  // the build ID names the folder
  CHECK(std::filesystem::exists(first.dir() + "/000000000000002a.so"));
  REQUIRE(Call(*entry, input, output) == 0);
  for (int i = 0; i < 1024; ++i) REQUIRE(output(i) == 2.f * i + 1.f);

  KernelDiskCache second(cache_dir);
  auto again = second.Load(42, TwicePlusOne(in), {in}, HostHalideTarget());
  REQUIRE(again.ok());
  CHECK(second.stats().loaded == 1);
  CHECK(second.stats().compiled == 0);
  output.fill(0.f);
  REQUIRE(Call(*again, input, output) == 0);
  CHECK(output(1023) == 2047.f);
  // No temporary files are left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(first.dir())) files += e.path().extension() == ".so" ? 1 : 100;
  CHECK(files == 2);  // the kernel and the runtime
}

TEST_CASE("the kernel disk cache refuses what it cannot hold, as a status") {
  testing::TempDir dir;
  Halide::ImageParam in(Halide::Float(32), 1, "in");
  // An unwritable place (a regular file where the directory should be).
  const std::string file = dir.path() + "/not_a_dir";
  FILE* f = std::fopen(file.c_str(), "w");
  std::fclose(f);
  KernelDiskCache blocked(file + "/kernels");
  auto entry = blocked.Load(1, TwicePlusOne(in), {in}, HostHalideTarget());
  CHECK(!entry.ok());
  CHECK(entry.status().code() == StatusCode::kIoError);

  // A pipeline calling back into this process (an extern stage) is compiled in memory instead.
  Halide::Func ext("ext");
  ext.define_extern("tilebank_no_such_function", {in}, Halide::Float(32), 1);
  Halide::Pipeline with_extern(ext);
  with_extern.set_jit_externs({{"tilebank_no_such_function", Halide::JITExtern{+[](halide_buffer_t*, halide_buffer_t*) { return 0; }}}});
  KernelDiskCache cache(dir.path() + "/kernels");
  auto refused = cache.Load(2, with_extern, {in}, HostHalideTarget());
  CHECK(!refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidInput);
}

TEST_CASE("TILEBANK_KERNEL_CACHE chooses or disables the kernel cache directory") {
  const char* saved = std::getenv("TILEBANK_KERNEL_CACHE");
  const std::string restore = saved ? saved : "";
  setenv("TILEBANK_KERNEL_CACHE", "/some/where", 1);
  CHECK(DefaultKernelCacheDir() == "/some/where");
  setenv("TILEBANK_KERNEL_CACHE", "off", 1);
  CHECK(DefaultKernelCacheDir().empty());
  unsetenv("TILEBANK_KERNEL_CACHE");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  CHECK(DefaultKernelCacheDir() == "/xdg/tilebank/kernels");
  unsetenv("XDG_CACHE_HOME");
  if (saved) setenv("TILEBANK_KERNEL_CACHE", restore.c_str(), 1);
}

}  // namespace
}  // namespace tilebank::engine
