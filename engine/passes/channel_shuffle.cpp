#include "engine/passes/channel_shuffle.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

#include "engine/ir/constant_slice.h"
#include "engine/ir/graph_uses.h"

namespace tilebank::engine::model {
namespace {

// A static-shape float32 tensor value.
bool StaticTensor(const Graph& g, int v) {
  return v >= 0 && g.values[v].shape_known && g.values[v].kind == ValueKind::kTensor && !g.IsConstant(v);
}

// The channel factors [c1, ..., ck] (k >= 2) when `split` is `x` with its axis 1 split into them,
// every other axis unchanged; nullopt otherwise.
std::optional<std::vector<int64_t>> ChannelFactors(const std::vector<int64_t>& x, const std::vector<int64_t>& split) {
  if (x.size() < 3 || x.size() > 5 || split.size() < x.size() + 1 || split[0] != x[0]) return std::nullopt;
  const size_t k = split.size() - x.size() + 1;
  const std::vector<int64_t> factors(split.begin() + 1, split.begin() + 1 + static_cast<std::ptrdiff_t>(k));
  if (std::accumulate(factors.begin(), factors.end(), int64_t{1}, std::multiplies<>()) != x[1]) return std::nullopt;
  if (!std::equal(x.begin() + 2, x.end(), split.begin() + 1 + static_cast<std::ptrdiff_t>(k))) return std::nullopt;
  return factors;
}

// For each output channel of the shuffle, the input channel it reads: the channels as a row-major
// array of shape `factors`, its axes permuted by `perm` (a permutation of 0..k-1), flattened.
std::vector<int64_t> ShuffledChannels(const std::vector<int64_t>& factors, const std::vector<int64_t>& perm) {
  const size_t k = factors.size();
  std::vector<int64_t> in_strides(k, 1);
  for (size_t a = k - 1; a > 0; --a) in_strides[a - 1] = in_strides[a] * factors[a];
  const int64_t channels = in_strides[0] * factors[0];
  std::vector<int64_t> indices(static_cast<size_t>(channels));
  for (int64_t o = 0; o < channels; ++o) {  // o's digits over the permuted factors, last fastest
    int64_t rest = o, in = 0;
    for (size_t a = k; a-- > 0;) {
      const size_t source = static_cast<size_t>(perm[a]);
      in += (rest % factors[source]) * in_strides[source];
      rest /= factors[source];
    }
    indices[static_cast<size_t>(o)] = in;
  }
  return indices;
}

// The channels [start, start + count) that `slice` takes of its input `v` when it is a Slice of
// axis 1 alone, step 1, by constants; nullopt otherwise.
std::optional<std::pair<int64_t, int64_t>> ChannelRange(const Graph& g, const Node& slice, int v) {
  if (slice.inputs.empty() || slice.inputs[0] != v || slice.outputs.size() != 1 || !StaticTensor(g, slice.outputs[0])) return std::nullopt;
  for (size_t k = 1; k < slice.inputs.size(); ++k)
    if (slice.inputs[k] >= 0 && !g.IsConstant(slice.inputs[k])) return std::nullopt;
  const std::vector<int64_t>&in = g.values[v].shape, &out = g.values[slice.outputs[0]].shape;
  const auto starts = ConstantSliceStarts(g, slice, in);
  if (!starts || out.size() != in.size()) return std::nullopt;
  for (size_t d = 0; d < in.size(); ++d)
    if (d != 1 && (out[d] != in[d] || (*starts)[d] != 0)) return std::nullopt;
  if ((*starts)[1] + out[1] > in[1]) return std::nullopt;
  return std::make_pair((*starts)[1], out[1]);
}

// A Gather node of `x`'s channels `channels` (axis 1) into `y`, named `name`.
Node ChannelGather(Graph* g, const std::string& name, int x, std::vector<int64_t> channels, int y) {
  Node gather;
  gather.name = name;
  gather.op_type = "Gather";
  gather.attrs["axis"] = int64_t{1};
  const int64_t count = static_cast<int64_t>(channels.size());
  gather.inputs = {x, AddConstant(g, name + "/indices", ConstTensor::Ints({count}, std::move(channels)), "int64")};
  gather.outputs = {y};
  return gather;
}

}  // namespace

size_t ChannelShuffleToGather(Graph* g) {
  return FuseEachNode(g, [g](size_t i, const GraphUses& u, std::vector<bool>* drop) {
    const Node& split = g->nodes[i];
    if (split.op_type != "Reshape" || split.inputs.empty() || split.outputs.size() != 1 || !StaticTensor(*g, split.inputs[0]) ||
        !StaticTensor(*g, split.outputs[0]) || !u.Private(split.outputs[0]))
      return false;
    const std::vector<int64_t>& x = g->values[split.inputs[0]].shape;
    const auto factors = ChannelFactors(x, g->values[split.outputs[0]].shape);
    if (!factors) return false;
    const size_t t = u.readers[split.outputs[0]][0];
    const Node& transpose = g->nodes[t];
    if (transpose.op_type != "Transpose" || transpose.outputs.size() != 1 || !StaticTensor(*g, transpose.outputs[0]) || !u.Private(transpose.outputs[0]))
      return false;
    // The permutation moves only the channel factors (axes 1..k); N and the spatial axes stay.
    const std::vector<int64_t> perm = g->AttrInts(transpose, "perm", {});
    const size_t k = factors->size(), rank = g->values[split.outputs[0]].shape.size();
    if (perm.size() != rank || perm[0] != 0) return false;
    std::vector<int64_t> channel_perm;
    for (size_t a = 1; a < rank; ++a) {
      if (a <= k && (perm[a] < 1 || perm[a] > static_cast<int64_t>(k))) return false;
      if (a > k && perm[a] != static_cast<int64_t>(a)) return false;
      if (a <= k) channel_perm.push_back(perm[a] - 1);
    }
    const size_t m = u.readers[transpose.outputs[0]][0];
    const Node& merge = g->nodes[m];
    if (merge.op_type != "Reshape" || merge.outputs.size() != 1 || merge.outputs[0] < 0 || !StaticTensor(*g, merge.outputs[0]) ||
        g->values[merge.outputs[0]].shape != x)
      return false;
    const std::vector<int64_t> shuffled = ShuffledChannels(*factors, channel_perm);
    const int x_value = split.inputs[0], merged = merge.outputs[0];
    // Read by channel Slices alone (ShuffleNet's halves): each Slice gathers its part of the shuffle.
    std::vector<std::pair<size_t, std::pair<int64_t, int64_t>>> slices;
    for (size_t r : u.readers[merged])
      if (auto range = ChannelRange(*g, g->nodes[r], merged)) slices.emplace_back(r, *range);
    if (!u.outputs.count(merged) && !slices.empty() && slices.size() == u.readers[merged].size()) {
      for (const auto& [r, range] : slices) {
        const auto first = shuffled.begin() + range.first;
        const std::string name = g->nodes[r].name + "/channel_shuffle";
        ReplaceNodes(g, {static_cast<int>(r)}, ChannelGather(g, name, x_value, {first, first + range.second}, g->nodes[r].outputs[0]), drop);
      }
      (*drop)[i] = (*drop)[t] = (*drop)[m] = true;
      return true;
    }
    ReplaceNodes(g, {static_cast<int>(i), static_cast<int>(t), static_cast<int>(m)}, ChannelGather(g, merge.name + "/channel_shuffle", x_value, shuffled, merged), drop);
    return true;
  });
}

}  // namespace tilebank::engine::model
