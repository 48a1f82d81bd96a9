// Settings the libraries read once, as they are loaded, before main: libgomp's spin count and
// glibc's malloc tunables. The command line sets those the user has not and executes itself again,
// once, so that they are in force from the start.
#pragma once
#include <string>

namespace tilebank::engine {

// The spin count libgomp's idle threads use before they sleep (GOMP_SPINCOUNT), when the user has
// not set it or OMP_WAIT_POLICY. By default they spin for a long while after each oneDNN primitive
// and take the cores from a Halide kernel that runs next: BERT, whose steps alternate between the
// two, ran 155 ms instead of 130.
inline constexpr const char* kOpenMpSpinCount = "30000";

// The glibc tunable that has malloc advise transparent huge pages for the memory it maps. A model's
// weights pass through large buffers while it loads (the proto's bytes, the graph's constants, the
// kernels' packed copies), each 4 KiB page touched first through a page fault and zeroed (about 12 us
// a page in these VMs): in 2 MiB pages video R3D-18 (128 MiB) loaded in 0.23-0.73 s instead of
// 1.3-1.6, MobileNetV2 (14 MiB) in 0.17 instead of 0.31, QuartzNet (18 MiB) in 0.13 instead of 0.26.
// A 2 MiB page is resident whole once touched; since the weights are held once and the activation
// arena is left untouched until the first run, that cost 0-3 MiB of peak memory on every model
// measured (MobileNetV2 had peaked at 105 MiB instead of 69 before; 65 against 64 now). So used for
// every command given a model file (-m, --model), where Linux offers transparent huge pages (on
// advice or always), unless GLIBC_TUNABLES already names it or TILEBANK_HUGE_PAGES is "off" ("on":
// also for commands without a model).
inline constexpr const char* kMallocHugePagesTunable = "glibc.malloc.hugetlb=1";

// GLIBC_TUNABLES (`current`, null when unset: a colon-separated list of name=value) with `tunable`
// (name=value) added; "" when `current` already sets that name, to any value.
std::string TunablesWith(const char* current, const std::string& tunable);

// Whether GLIBC_TUNABLES (`tunables`, null when unset) has malloc use huge pages:
// glibc.malloc.hugetlb 1 (transparent, on advice) or 2 (reserved pages).
bool TunablesUseHugePages(const char* tunables);

// The size of the model file a command line names (-m PATH, --model PATH, --model=PATH); 0 where it
// names none or the file cannot be read.
long long ModelFileBytes(int argc, char** argv);

// Whether Linux gives transparent huge pages to memory advised so: the mode selected in
// /sys/kernel/mm/transparent_hugepage/enabled is "always" or "madvise".
bool TransparentHugePagesOffered();

// Call first in main: tells the heap (engine/core/heap_blocks.h) whether malloc uses huge pages; sets GOMP_SPINCOUNT and GLIBC_TUNABLES as above where they are wanted and not
// set, and if it changed either, executes the program again with them (once: the second start finds
// them set). The second start puts GLIBC_TUNABLES back as the user had it (glibc read it as the
// program started), so that the processes it starts decide for their own models. Where executing
// fails it returns, GLIBC_TUNABLES as it was, and the process goes on as it is.
void PrepareStartupEnvironment(int argc, char** argv);

}  // namespace tilebank::engine
