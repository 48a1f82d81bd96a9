// Halide on demand: the executables do not load libHalide (and LLVM, which it links: some 48 MiB
// resident the moment it is mapped) until the first call into it. Every function libHalide exports
// is an entry of the generated stubs (link/halide_on_demand_stubs.cmake) that jumps through a slot;
// a slot first leads to tb_halide_bind_slot, which opens the library, looks the function up and
// puts it in the slot, so later calls cost one indirect jump. A process that runs no Halide kernel
// (a model on oneDNN alone, a bank command) never maps it.
//
// The one call made before main, Halide.h's introspection check (each file that includes it runs it
// as a static initializer), is kept here and made when the library opens.
#include <dlfcn.h>

#include <Halide.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

extern "C" {
extern void* tb_halide_slots[] __attribute__((visibility("hidden")));
extern const char* const tb_halide_symbol_names[] __attribute__((visibility("hidden")));
extern const std::size_t tb_halide_symbol_count __attribute__((visibility("hidden")));
// Called from the stubs' binder, which has no unwind information: nothing may be thrown through it.
void* tb_halide_bind_slot(std::size_t index) noexcept __attribute__((visibility("hidden")));
}

namespace {

using IntrospectionTest = bool (*)(bool (*)(const void*, const std::string&));
using IntrospectionCheck = bool (*)(const void*, const std::string&);
using CompilationUnitTest = void (*)(IntrospectionTest, IntrospectionCheck, void (*)());
constexpr const char* kCompilationUnitTest = TILEBANK_HALIDE_INTROSPECTION_TEST;  // its mangled name (CMakeLists.txt)

struct PendingTest {
  IntrospectionTest test;
  IntrospectionCheck check;
  void (*offset_marker)();
};

// The introspection checks made before the library opened, and the real check once it has.
struct Deferred {
  std::mutex mutex;
  std::vector<PendingTest> pending;
  CompilationUnitTest real = nullptr;
};

Deferred& DeferredTests() {
  static Deferred* deferred = new Deferred;  // never destroyed: static initializers of any file may use it
  return *deferred;
}

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "tilebank: %s\n", what.c_str());
  std::abort();
}

// Makes the introspection checks recorded before the library opened, once. A check may call into
// Halide through the stubs (check_introspection): that nested call, on this thread, finds the
// replay under way and goes on; other threads wait for it to end.
void ReplayDeferredTests(void* library) {
  static std::recursive_mutex mutex;
  static bool started = false;
  std::lock_guard<std::recursive_mutex> lock(mutex);
  if (started) return;
  started = true;
  auto real = reinterpret_cast<CompilationUnitTest>(dlsym(library, kCompilationUnitTest));
  if (!real) Fail(std::string(TILEBANK_HALIDE_SONAME) + " lacks " + kCompilationUnitTest);
  std::vector<PendingTest> pending;
  {
    Deferred& d = DeferredTests();
    std::lock_guard<std::mutex> deferred_lock(d.mutex);
    pending.swap(d.pending);
    d.real = real;
  }
  for (const PendingTest& t : pending) real(t.test, t.check, t.offset_marker);
}

void* Library() {
  // Lazily bound, as it was when the executables linked it; local, so that nothing else binds to it
  // by accident (Halide's plugins name it as a dependency and find it open).
  static void* library = [] {
    void* h = dlopen(TILEBANK_HALIDE_SONAME, RTLD_LAZY | RTLD_LOCAL);
    if (!h) h = dlopen(TILEBANK_HALIDE_PATH, RTLD_LAZY | RTLD_LOCAL);
    if (!h) Fail(std::string("cannot load Halide (") + TILEBANK_HALIDE_SONAME + " or " + TILEBANK_HALIDE_PATH + "): " + dlerror());
    return h;
  }();
  ReplayDeferredTests(library);
  return library;
}

}  // namespace

extern "C" void* tb_halide_bind_slot(std::size_t index) noexcept {
  if (index >= tb_halide_symbol_count) Fail("a Halide stub past the end of its table");
  void* function = dlsym(Library(), tb_halide_symbol_names[index]);
  if (!function) Fail(std::string(TILEBANK_HALIDE_SONAME) + " lacks " + tb_halide_symbol_names[index] + ", which this build was linked against");
  __atomic_store_n(&tb_halide_slots[index], function, __ATOMIC_RELEASE);
  return function;
}

namespace Halide::Internal::Introspection {

void test_compilation_unit(IntrospectionTest test, IntrospectionCheck check, void (*offset_marker)()) {
  Deferred& d = DeferredTests();
  CompilationUnitTest real = nullptr;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    if (!d.real) {
      d.pending.push_back({test, check, offset_marker});
      return;
    }
    real = d.real;
  }
  real(test, check, offset_marker);
}

}  // namespace Halide::Internal::Introspection
