// Text ops: StringNormalizer (case change, stopwords) and TfIdfVectorizer (n-gram counts with
// skips over int or string tokens, TF / IDF / TFIDF weighting).
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

std::string Cased(std::string s, bool upper) {
  for (char& c : s) c = static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Result<std::unique_ptr<OpKernel>> MakeStringNormalizer(const KernelInfo& info) {
  return FunctionKernel([info](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    if (x.rank() > 2 || (x.rank() == 2 && x.shape[0] != 1)) return info.Bad("takes strings [C] or [1, C]");
    const std::string action = info.attrs.String("case_change_action", "NONE");
    const bool sensitive = info.attrs.Int("is_case_sensitive", 0) != 0;
    std::set<std::string> stopwords;
    if (info.attrs.Has("stopwords"))
      for (const auto& w : info.attrs.json()["stopwords"]) stopwords.insert(sensitive ? w.get<std::string>() : Cased(w.get<std::string>(), false));
    std::vector<std::string> kept;
    for (const auto& s : x.strings) {
      if (stopwords.count(sensitive ? s : Cased(s, false))) continue;
      kept.push_back(action == "LOWER" ? Cased(s, false) : action == "UPPER" ? Cased(s, true) : s);
    }
    if (kept.empty()) kept.push_back("");  // all removed: one empty string
    const int64_t n = static_cast<int64_t>(kept.size());
    TypedTensor y(DType::kString, x.rank() == 2 ? std::vector<int64_t>{1, n} : std::vector<int64_t>{n});
    y.strings = std::move(kept);
    (*out)[0] = std::move(y);
    return Status::Ok();
  });
}

Result<std::unique_ptr<OpKernel>> MakeTfIdfVectorizer(const KernelInfo& info) {
  const int64_t min_n = info.attrs.Int("min_gram_length", 1), max_n = info.attrs.Int("max_gram_length", 1), max_skip = info.attrs.Int("max_skip_count", 0);
  const std::string mode = info.attrs.String("mode", "TF");
  const std::vector<int64_t> counts = info.attrs.Ints("ngram_counts"), indexes = info.attrs.Ints("ngram_indexes");
  const std::vector<float> weights = info.attrs.Floats("weights");
  std::vector<std::string> pool;
  if (info.attrs.Has("pool_strings"))
    for (const auto& s : info.attrs.json()["pool_strings"]) pool.push_back(s.get<std::string>());
  else
    for (int64_t v : info.attrs.Ints("pool_int64s")) pool.push_back(std::to_string(v));
  if (min_n < 1 || max_n < min_n || max_skip < 0) return info.Bad("min_gram_length, max_gram_length or max_skip_count is out of range");
  // Each pooled n-gram (tokens joined by '\x1f') -> its output index.
  std::map<std::string, int64_t> grams;
  size_t next = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    const size_t end = level + 1 < counts.size() ? static_cast<size_t>(counts[level + 1]) : pool.size();
    for (size_t at = static_cast<size_t>(counts[level]); at + level < end; at += level + 1, ++next) {
      std::string key;
      for (size_t k = 0; k <= level; ++k) key += (k ? "\x1f" : "") + pool[at + k];
      if (next >= indexes.size()) return info.Bad("ngram_indexes has fewer entries than the pool has n-grams");
      grams[key] = indexes[next];
    }
  }
  const int64_t width = indexes.empty() ? 0 : *std::max_element(indexes.begin(), indexes.end()) + 1;
  return FunctionKernel([=](const KernelInputs& in, std::vector<TypedTensor>* out) -> Status {
    const TypedTensor& x = *in[0];
    if (x.rank() < 1 || x.rank() > 2) return info.Bad("takes tokens [C] or [N, C]");
    const int64_t rows = x.rank() == 2 ? x.shape[0] : 1, C = x.shape.back();
    auto token = [&](int64_t i) { return x.dtype == DType::kString ? x.strings[i] : std::to_string(x.IntAt(i)); };
    std::vector<double> y(static_cast<size_t>(rows * width), 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t skip = 0; skip <= max_skip; ++skip)
        for (int64_t start = 0; start < C; ++start) {
          std::string key;
          for (int64_t n = 1; n <= max_n; ++n) {
            const int64_t at = start + (n - 1) * (skip + 1);
            if (at >= C) break;
            key += (n > 1 ? "\x1f" : "") + token(r * C + at);
            if (n < min_n || (n == 1 && skip > 0)) continue;  // a unigram is counted once, not once per skip
            auto it = grams.find(key);
            if (it != grams.end()) y[r * width + it->second] += 1;
          }
        }
    for (int64_t i = 0; i < rows * width; ++i) {
      const double w = weights.empty() ? 1.0 : weights[i % width];
      if (mode == "IDF") y[i] = y[i] > 0 ? w : 0.0;
      else if (mode == "TFIDF") y[i] *= w;
    }
    TypedTensor t(DType::kFloat32, x.rank() == 2 ? std::vector<int64_t>{rows, width} : std::vector<int64_t>{width});
    for (int64_t i = 0; i < t.size(); ++i) t.SetAt(i, y[i]);
    (*out)[0] = std::move(t);
    return Status::Ok();
  });
}

}  // namespace

void RegisterStringKernels(KernelRegistry* r) {
  r->Add({"StringNormalizer", 10, INT_MAX, {DType::kString}, 0, MakeStringNormalizer});
  r->Add({"TfIdfVectorizer", 9, INT_MAX, {DType::kString, DType::kInt32, DType::kInt64}, 0, MakeTfIdfVectorizer});
}

}  // namespace tilebank::engine::kernels
