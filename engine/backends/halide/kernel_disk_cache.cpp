#include "engine/backends/halide/kernel_disk_cache.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include "engine/backends/halide/openmp_par_for.h"

extern char** environ;

namespace tilebank::engine {

namespace fs = std::filesystem;

namespace {

std::string Hex(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// A name no other process or thread uses, beside `path`.
std::string TemporaryBeside(const std::string& path) {
  return path + ".tmp" + std::to_string(getpid()) + "_" + Hex(std::hash<std::thread::id>()(std::this_thread::get_id()));
}

// Links `object` into the shared object `output` with the system C compiler ($CC, else cc).
Status LinkShared(const std::string& object, const std::string& output) {
  const char* cc = std::getenv("CC");
  std::string compiler = cc && *cc ? cc : "cc";
  std::vector<std::string> argv_text = {compiler, "-shared", "-o", output, object};
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  const int spawned = posix_spawnp(&pid, compiler.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return Status::IoError("cannot start the C compiler '" + compiler + "' to link a kernel");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return Status::IoError("lost the C compiler linking a kernel");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return Status::IoError("'" + compiler + " -shared' failed on " + object);
  return Status::Ok();
}

// Compiles with `write` into a temporary object, links it, and renames the result to `path`.
Status BuildSharedObject(const std::string& path, const std::function<void(const std::string&)>& write) {
  const std::string tmp = TemporaryBeside(path);
  const std::string object = tmp + ".o";
  try {
    write(object);
  } catch (const Halide::Error& e) {
    std::error_code ignored;
    fs::remove(object, ignored);
    return Status::InvalidInput(std::string("ahead-of-time compile failed: ") + e.what());
  }
  Status linked = LinkShared(object, tmp);
  std::error_code ec;
  fs::remove(object, ec);
  if (linked.ok()) fs::rename(tmp, path, ec);
  if (!linked.ok() || ec) {
    fs::remove(tmp, ec);
    return linked.ok() ? Status::IoError("cannot store " + path) : linked;
  }
  return Status::Ok();
}

// The GNU build ID of the running executable (every change to the code that defines kernels
// changes it), as hex; a hash of the executable's file when it has none.
std::string ExecutableBuildId() {
  std::string id;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        auto& found = *static_cast<std::string*>(out);
        for (int i = 0; i < info->dlpi_phnum && found.empty(); ++i) {
          if (info->dlpi_phdr[i].p_type != PT_NOTE) continue;
          const char* note = reinterpret_cast<const char*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
          const char* end = note + info->dlpi_phdr[i].p_memsz;
          while (note + sizeof(ElfW(Nhdr)) <= end) {
            const auto* header = reinterpret_cast<const ElfW(Nhdr)*>(note);
            const char* desc = note + sizeof(ElfW(Nhdr)) + ((header->n_namesz + 3) & ~3u);
            if (header->n_type == NT_GNU_BUILD_ID)
              for (uint32_t b = 0; b < header->n_descsz; ++b) found += Hex(static_cast<unsigned char>(desc[b])).substr(14);
            note = desc + ((header->n_descsz + 3) & ~3u);
          }
        }
        return 1;  // the first object is the executable
      },
      &id);
  if (!id.empty()) return id;
  std::ifstream exe("/proc/self/exe", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(exe)), std::istreambuf_iterator<char>());
  return Hex(XXH3_64bits(bytes.data(), bytes.size()));
}

}  // namespace

KernelDiskCache::KernelDiskCache(std::string root) : dir_(root + "/" + ExecutableBuildId()) {}

Status KernelDiskCache::OpenRuntime(const std::string& file) {
  if (runtimes_open_.count(file)) return Status::Ok();
  // Global, so each kernel's references to halide_* resolve to this one runtime (and thread pool).
  const std::string path = dir_ + "/" + file;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) return Status::IoError(std::string("cannot load the Halide runtime: ") + dlerror());
  UseOpenMpForHalideRuntime(handle);
  runtimes_open_.insert(file);
  return Status::Ok();
}

Status KernelDiskCache::LoadRuntime(const Halide::Target& target) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!runtime_file_.empty()) return Status::Ok();
  const std::string text = target.to_string();
  const std::string file = "halide_runtime_" + Hex(XXH3_64bits(text.data(), text.size())) + ".so";
  std::error_code ec;
  if (!fs::exists(dir_ + "/" + file, ec))
    TB_RETURN_IF_ERROR(BuildSharedObject(dir_ + "/" + file, [&](const std::string& object) { Halide::compile_standalone_runtime(object, target); }));
  TB_RETURN_IF_ERROR(OpenRuntime(file));
  runtime_file_ = file;
  target_text_ = text;
  return Status::Ok();
}

Status KernelDiskCache::SaveRunDescription(uint64_t key, const std::string& description) {
  std::string runtime, target;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    runtime = runtime_file_, target = target_text_;
  }
  if (runtime.empty()) return Status::InvalidInput("no kernel of this process is stored in " + dir_);
  const std::string path = dir_ + "/" + Hex(key) + ".run", tmp = TemporaryBeside(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << runtime << '\n' << target << '\n' << description;
    if (!out.flush()) return Status::IoError("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Status::IoError("cannot store " + path);
  }
  return Status::Ok();
}

std::optional<PrebuiltEntry> KernelDiskCache::LoadPrebuilt(uint64_t key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = prebuilt_.find(key); it != prebuilt_.end()) return it->second;
  }
  // The description: the runtime's file name, the target's text, then the arguments.
  std::ifstream in(dir_ + "/" + Hex(key) + ".run", std::ios::binary);
  std::string runtime;
  PrebuiltEntry found;
  if (!in || !std::getline(in, runtime) || runtime.find('/') != std::string::npos || runtime.rfind("halide_runtime_", 0) != 0 ||
      !std::getline(in, found.target))
    return std::nullopt;
  found.description.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::lock_guard<std::mutex> lock(mutex_);
  if (!OpenRuntime(runtime).ok()) return std::nullopt;
  const std::string path = dir_ + "/" + Hex(key) + ".so";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept open: the kernel lives as long as the process
  if (!handle) return std::nullopt;
  found.entry = reinterpret_cast<ArgvEntry>(dlsym(handle, ("tilebank_kernel_" + Hex(key) + "_argv").c_str()));
  if (!found.entry) return std::nullopt;
  stats_.loaded++;
  prebuilt_[key] = found;
  return found;
}

Result<ArgvEntry> KernelDiskCache::Load(uint64_t key, Halide::Pipeline pipeline, const std::vector<Halide::Argument>& args,
                                        const Halide::Target& target) {
  if (!pipeline.get_jit_externs().empty()) return Status::InvalidInput("a pipeline with extern stages is compiled in process");
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::IoError("cannot create the kernel cache " + dir_ + ": " + ec.message());
  TB_RETURN_IF_ERROR(LoadRuntime(target));
  const std::string name = "tilebank_kernel_" + Hex(key);  // LoadPrebuilt looks its entry up by this name
  const std::string path = dir_ + "/" + Hex(key) + ".so";
  bool compiled = false;
  auto build = [&] {
    const Halide::Target kernel_target = target.with_feature(Halide::Target::NoRuntime);
    compiled = true;
    return BuildSharedObject(path, [&](const std::string& object) { pipeline.compile_to_object(object, args, name, kernel_target); });
  };
  if (!fs::exists(path, ec)) TB_RETURN_IF_ERROR(build());
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept open: the kernel lives as long as the process
  if (!handle && !compiled) {  // a damaged file (a disk error, a foreign build): replaced once
    fs::remove(path, ec);
    TB_RETURN_IF_ERROR(build());
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (!handle) return Status::IoError("cannot load cached kernel " + path + ": " + dlerror());
  auto entry = reinterpret_cast<ArgvEntry>(dlsym(handle, (name + "_argv").c_str()));
  if (!entry) return Status::IoError("cached kernel " + path + " lacks " + name + "_argv");
  std::lock_guard<std::mutex> lock(mutex_);
  (compiled ? stats_.compiled : stats_.loaded)++;
  return entry;
}

KernelDiskCacheStats KernelDiskCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::string DefaultKernelCacheDir() {
  if (const char* dir = std::getenv("TILEBANK_KERNEL_CACHE"); dir && *dir) return std::string(dir) == "off" ? "" : dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/tilebank/kernels";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/tilebank/kernels";
  return "";
}

KernelDiskCache& KernelDiskCacheAt(const std::string& dir) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<KernelDiskCache>> caches;
  std::lock_guard<std::mutex> lock(mutex);
  auto& cache = caches[dir];
  if (!cache) cache = std::make_unique<KernelDiskCache>(dir);
  return *cache;
}

}  // namespace tilebank::engine
