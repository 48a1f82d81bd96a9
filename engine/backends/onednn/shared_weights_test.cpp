#include "engine/backends/onednn/shared_weights.h"

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "engine/backends/onednn/onednn_common.h"

namespace tilebank::engine {
namespace {

using dnnl::memory;

TEST_CASE("PlaceWeights: the same values into the same layout share one memory while a kernel holds it, other values, layouts or a released one are placed anew") {
  dnnl::stream stream(OneDnnCpuEngine());
  const memory::dims dims = {32, 16, 3, 3};
  const memory::desc plain(dims, memory::data_type::f32, memory::format_tag::oihw);
  const memory::desc blocked(dims, memory::data_type::f32, memory::format_tag::OIhw16i16o);
  const memory::desc other(dims, memory::data_type::f32, memory::format_tag::ohwi);
  std::vector<float> values(32 * 16 * 9), copy;
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 97) - 40.f;
  copy = values;  // the same values at another address
  memory a(plain, OneDnnCpuEngine(), values.data()), b(plain, OneDnnCpuEngine(), copy.data());
  std::shared_ptr<const void> hold_a, hold_b, hold_c, hold_d;
  const memory placed_a = PlaceWeights(a, blocked, stream, &hold_a);
  const memory placed_b = PlaceWeights(b, blocked, stream, &hold_b);
  CHECK(placed_a.get_data_handle() == placed_b.get_data_handle());
  // The placed values are the reorder's.
  memory back(plain, OneDnnCpuEngine());
  memory source = placed_a;
  dnnl::reorder(source, back).execute(stream, source, back);
  stream.wait();
  CHECK(std::memcmp(back.get_data_handle(), values.data(), values.size() * sizeof(float)) == 0);
  // Another layout, other values: their own.
  CHECK(PlaceWeights(a, other, stream, &hold_c).get_data_handle() != placed_a.get_data_handle());
  copy[5] += 1.f;
  CHECK(PlaceWeights(b, blocked, stream, &hold_d).get_data_handle() != placed_a.get_data_handle());
  // Released by every holder: the next call places the values again (the old memory is gone).
  hold_a.reset();
  hold_b.reset();
  std::shared_ptr<const void> hold_e;
  const memory again = PlaceWeights(a, blocked, stream, &hold_e);
  CHECK(hold_e != nullptr);
  CHECK(hold_e.use_count() == 1);
}

}  // namespace
}  // namespace tilebank::engine
