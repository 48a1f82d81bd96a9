#include "engine/backends/onednn/shared_weights.h"

#include <xxhash.h>

#include <map>
#include <mutex>
#include <string>

#include "engine/backends/onednn/onednn_common.h"

namespace tilebank::engine {

namespace {

struct Placed {
  dnnl::memory memory;
};

// What identifies a placed copy: the source's values and dims, the layout's description.
std::string KeyOf(const dnnl::memory& from, const dnnl::memory::desc& layout) {
  const dnnl::memory::desc source = from.get_desc();
  const size_t bytes = source.get_size();
  std::string key = std::to_string(XXH3_64bits(from.get_data_handle(), bytes)) + "|" + std::to_string(bytes) + "|";
  for (const auto d : source.dims()) key += std::to_string(d) + ",";
  key += "|" + HandoverLayoutOf(source).key + "|" + HandoverLayoutOf(layout).key;
  return key;
}

dnnl::memory Reordered(const dnnl::memory& from, const dnnl::memory::desc& layout, dnnl::stream& stream) {
  dnnl::memory placed(layout, OneDnnCpuEngine());
  dnnl::memory source = from;
  dnnl::reorder(source, placed).execute(stream, source, placed);
  stream.wait();
  return placed;
}

}  // namespace

dnnl::memory PlaceWeights(const dnnl::memory& from, const dnnl::memory::desc& layout, dnnl::stream& stream, std::shared_ptr<const void>* holder) {
  if (layout.data.format_kind != dnnl_blocked || from.get_desc().data.format_kind != dnnl_blocked) {
    holder->reset();
    return Reordered(from, layout, stream);
  }
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<const Placed>> known;
  const std::string key = KeyOf(from, layout);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = known.find(key); it != known.end()) {
      if (auto alive = it->second.lock()) {
        *holder = alive;
        return alive->memory;
      }
      known.erase(it);
    }
  }
  auto made = std::make_shared<const Placed>(Placed{Reordered(from, layout, stream)});
  std::lock_guard<std::mutex> lock(mutex);
  for (auto it = known.begin(); it != known.end();) it = it->second.expired() ? known.erase(it) : std::next(it);  // the ones no kernel holds
  known[key] = made;
  *holder = made;
  return made->memory;
}

}  // namespace tilebank::engine
