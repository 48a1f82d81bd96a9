// For the tests of layout-family kernels: runs one on a row-major tensor moved into a family and
// moves its output back.
#pragma once
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/backends/onednn/onednn_common.h"
#include "engine/backends/onednn/onednn_layout_ops.h"

namespace tilebank::engine {

struct FamilyRun {
  std::vector<float> output;  // row-major
  std::vector<float> raw;     // as the kernel wrote it, in the family's layout (padding included)
};

// `shape` in a family as the layout plan's kernels describe it, by oneDNN's tag (an axis of one
// keeps the family's stride): "channels-last", "blocked16" or "blocked8", rank 3 to 5.
inline dnnl::memory::desc FamilyTagDesc(const std::string& family, const std::vector<int64_t>& shape) {
  using tag = dnnl::memory::format_tag;
  const size_t r = shape.size();
  tag t = r == 3 ? tag::acb : r == 4 ? tag::acdb : tag::acdeb;
  if (family == "blocked16") t = r == 3 ? tag::aBc16b : r == 4 ? tag::aBcd16b : tag::aBcde16b;
  if (family == "blocked8") t = r == 3 ? tag::aBc8b : r == 4 ? tag::aBcd8b : tag::aBcde8b;
  return dnnl::memory::desc(dnnl::memory::dims(shape.begin(), shape.end()), dnnl::memory::data_type::f32, t);
}

// x (row-major, `shape`) reordered into a memory of `md` (its padding 0, as the kernels writing a
// family leave it): the input of a kernel whose output is not in the family.
inline dnnl::memory MovedInto(const dnnl::memory::desc& md, const std::vector<int64_t>& shape, std::vector<float>& x) {
  dnnl::stream stream(OneDnnCpuEngine());
  dnnl::memory plain(RowMajorDesc(shape), OneDnnCpuEngine(), x.data()), in(md, OneDnnCpuEngine());
  std::memset(in.get_data_handle(), 0, md.get_size());
  dnnl::reorder(plain, in).execute(stream, plain, in);
  stream.wait();
  return in;
}

// x (row-major, `shape`) reordered into `family`, the kernel run on it and the `extra` inputs
// (passed as they are: row-major operands), its output (first filled with 1234) reordered back.
// narrow_in / narrow_out: the tensor comes, and the output goes, in the family's layout in bf16
// (the kernel told so first: Kernel::UseNarrowLayouts); `raw` then holds the output widened.
// `out_shape`: the output's, where it differs from the input's (a resize).
inline FamilyRun RunInFamily(Kernel& kernel, const std::string& family, const std::vector<int64_t>& shape, std::vector<float> x,
                             const std::vector<const float*>& extra = {}, bool narrow_in = false, bool narrow_out = false,
                             std::vector<int64_t> out_shape = {}) {
  if (out_shape.empty()) out_shape = shape;
  const HandoverLayout layout = LayoutInFamily(family, shape), out_layout = LayoutInFamily(family, out_shape);
  REQUIRE(layout.name == family);
  REQUIRE(out_layout.name == family);
  const auto md = DescOfHandover(layout, shape), out_family = DescOfHandover(out_layout, out_shape);
  REQUIRE(md);
  REQUIRE(out_family);
  if (narrow_in || narrow_out) {
    std::vector<bool> inputs(1 + extra.size(), false);
    inputs[0] = narrow_in;
    REQUIRE(kernel.UseNarrowLayouts(inputs, narrow_out).ok());
  }
  const dnnl::memory::desc in_md = narrow_in ? WithBf16(*md) : *md, out_md = narrow_out ? WithBf16(*out_family) : *out_family;
  dnnl::stream stream(OneDnnCpuEngine());
  dnnl::memory plain(RowMajorDesc(shape), OneDnnCpuEngine(), x.data()), in(in_md, OneDnnCpuEngine()), out(out_md, OneDnnCpuEngine());
  std::memset(in.get_data_handle(), 0, in_md.get_size());
  dnnl::reorder(plain, in).execute(stream, plain, in);
  stream.wait();
  FamilyRun run;
  run.raw.assign(out_family->get_size() / sizeof(float), 1234.0f);
  dnnl::memory raw(*out_family, OneDnnCpuEngine(), run.raw.data());
  dnnl::reorder(raw, out).execute(stream, raw, out);
  stream.wait();
  std::vector<const float*> inputs = {static_cast<const float*>(in.get_data_handle())};
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  REQUIRE(kernel.RunDirect(inputs, static_cast<float*>(out.get_data_handle())).ok());
  dnnl::reorder(out, raw).execute(stream, out, raw);
  stream.wait();
  run.output.assign(static_cast<size_t>(Tensor::NumElements(out_shape)), 0.0f);
  dnnl::memory back(RowMajorDesc(out_shape), OneDnnCpuEngine(), run.output.data());
  dnnl::reorder(out, back).execute(stream, out, back);
  stream.wait();
  return run;
}

// Whether every padding channel of a blocked run (channels past C in the last block) holds 0.
inline bool PaddingIsZero(const FamilyRun& run, const std::string& family, int64_t N, int64_t C, int64_t S) {
  const int64_t padded = static_cast<int64_t>(run.raw.size()) / (N * S);
  if (padded == C) return true;
  const int64_t block = family.find("16") != std::string::npos ? 16 : family.find('8') != std::string::npos ? 8 : 4;  // nChw16c, aBc8b...
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = C; c < padded; ++c)
      for (int64_t s = 0; s < S; ++s)
        if (run.raw[((n * (padded / block) + c / block) * S + s) * block + c % block] != 0.0f) return false;
  return true;
}

}  // namespace tilebank::engine
