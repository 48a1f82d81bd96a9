// NonMaxSuppression's "pruned" implementation against the reference (every kept box checked): the
// same selection on crowded boxes, on class-offset boxes as torchvision's batched_nms writes them,
// in corner and center form, with a negative IoU threshold, empty, inverted, NaN, infinite and huge
// boxes, many tiny boxes far apart, score thresholds and box limits; and the registry picks it for
// a float32 NonMaxSuppression.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <random>

#include "engine/kernels/kernel_registry.h"

namespace tilebank::engine::kernels {
namespace {

KernelInfo NmsInfo(bool center) {
  KernelInfo info;
  info.op_type = "NonMaxSuppression";
  info.node_name = "nms";
  info.opset = 11;
  info.attrs = Attrs(nlohmann::json{{"center_point_box", center ? 1 : 0}});
  info.input_types = {DType::kFloat32, DType::kFloat32, DType::kInt64, DType::kFloat32, DType::kFloat32};
  return info;
}

TypedTensor Nms(const std::string& implementation, bool center, const TypedTensor& boxes, const TypedTensor& scores, int64_t max_boxes,
                float iou, const float* score_threshold) {
  auto kernel = KernelRegistry::Default().Create(NmsInfo(center), implementation);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
  const TypedTensor limit = TypedTensor::Of<int64_t>({1}, {max_boxes}), threshold = TypedTensor::Of<float>({1}, {iou});
  const TypedTensor min_score = TypedTensor::Of<float>({1}, {score_threshold ? *score_threshold : 0.0f});
  std::vector<TypedTensor> out(1);
  const Status s = (*kernel)->Compute({&boxes, &scores, &limit, &threshold, score_threshold ? &min_score : nullptr}, &out);
  REQUIRE_MESSAGE(s.ok(), s.message());
  return out[0];
}

// [B, N, 4] boxes: `classes` groups of boxes in [0, extent)^2, each group shifted by `offset` (the
// batched_nms trick) when offset > 0; sides up to `side`. Corners [y1, x1, y2, x2], or with `center`
// [x_center, y_center, width, height].
TypedTensor Boxes(std::mt19937& rng, int64_t B, int64_t N, float extent, float side, int classes, float offset, bool center = false) {
  std::uniform_real_distribution<float> at(0, extent), size(0, side);
  std::uniform_int_distribution<int> group(0, classes - 1);
  TypedTensor t(DType::kFloat32, {B, N, 4});
  float* p = t.data<float>();
  for (int64_t i = 0; i < B * N; ++i) {
    const float shift = offset * static_cast<float>(group(rng));
    const float y = at(rng) + shift, x = at(rng) + shift, h = size(rng), w = size(rng);
    if (center) p[i * 4 + 0] = x, p[i * 4 + 1] = y, p[i * 4 + 2] = w, p[i * 4 + 3] = h;
    else p[i * 4 + 0] = y, p[i * 4 + 1] = x, p[i * 4 + 2] = y + h, p[i * 4 + 3] = x + w;
  }
  return t;
}

TypedTensor Scores(std::mt19937& rng, int64_t B, int64_t C, int64_t N) {
  std::uniform_int_distribution<int> level(0, 40);  // coarse: ties in score happen
  TypedTensor t(DType::kFloat32, {B, C, N});
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(level(rng)) / 40.0f;
  return t;
}

void CheckSame(bool center, const TypedTensor& boxes, const TypedTensor& scores, int64_t max_boxes, float iou, const float* score_threshold) {
  const TypedTensor want = Nms("reference", center, boxes, scores, max_boxes, iou, score_threshold);
  const TypedTensor got = Nms("pruned", center, boxes, scores, max_boxes, iou, score_threshold);
  CHECK(got == want);
}

TEST_CASE("NonMaxSuppression pruned: the reference's selection on crowded and class-offset boxes") {
  std::mt19937 rng(7);
  const float half = 0.5f, none = -1.0f;
  for (bool center : {false, true})
    for (float offset : {0.0f, 400.0f}) {
      CAPTURE(center);
      CAPTURE(offset);
      const TypedTensor boxes = Boxes(rng, 2, 600, 320, 120, 20, offset, center), scores = Scores(rng, 2, 3, 600);
      for (float iou : {0.0f, 0.3f, 0.7f, -0.1f}) {
        CAPTURE(iou);
        CheckSame(center, boxes, scores, 10000, iou, nullptr);
        CheckSame(center, boxes, scores, 5, iou, &half);
        CheckSame(center, boxes, scores, 10000, iou, &none);
      }
      CheckSame(center, boxes, scores, 0, 0.5f, nullptr);  // no box asked for
    }
}

TEST_CASE("NonMaxSuppression pruned: empty, inverted, NaN, infinite and huge boxes, one box, no boxes") {
  std::mt19937 rng(11);
  const TypedTensor scores = Scores(rng, 1, 2, 50);
  for (int odd : {0, 1, 2, 3}) {  // the odd boxes among bucketed ones; then with an infinite box on one axis; on both; a huge finite one
    CAPTURE(odd);
    TypedTensor boxes = Boxes(rng, 1, 50, 100, 30, 2, 200);
    float* p = boxes.data<float>();
    p[0] = p[2] = 10;                 // no height
    std::swap(p[4], p[6]);            // corners given the other way round
    p[8] = std::nanf("");             // a NaN corner
    if (odd == 1) p[12] = -HUGE_VALF;  // infinite along y only
    if (odd == 2)
      for (int k = 12; k < 16; ++k) p[k] = HUGE_VALF;
    if (odd == 3) p[14] = p[15] = FLT_MAX;  // finite, and far beyond the rest
    for (float iou : {0.0f, 0.5f}) CheckSame(false, boxes, scores, 100, iou, nullptr);
  }
  // Center boxes with negative sides, and boxes of no extent at all, far apart.
  TypedTensor center = Boxes(rng, 1, 50, 100, 30, 2, 200, true);
  center.data<float>()[2] = -5;
  CheckSame(true, center, scores, 100, 0.0f, nullptr);
  TypedTensor points(DType::kFloat32, {1, 50, 4});
  for (int64_t i = 0; i < 50; ++i)
    for (int k = 0; k < 4; ++k) points.data<float>()[i * 4 + k] = static_cast<float>(i % 7) * 1e6f;
  CheckSame(false, points, scores, 100, 0.0f, nullptr);
  const TypedTensor one = Boxes(rng, 1, 1, 10, 5, 1, 0), one_score = Scores(rng, 1, 1, 1);
  CheckSame(false, one, one_score, 3, 0.5f, nullptr);
  const TypedTensor none(DType::kFloat32, {1, 0, 4}), no_scores(DType::kFloat32, {1, 2, 0});
  CHECK(Nms("pruned", false, none, no_scores, 3, 0.5f, nullptr).shape == std::vector<int64_t>{0, 3});
}

TEST_CASE("NonMaxSuppression pruned: many tiny boxes spread far (more buckets than candidates allow)") {
  std::mt19937 rng(13);
  const TypedTensor boxes = Boxes(rng, 1, 400, 1e6f, 2, 1, 0), scores = Scores(rng, 1, 1, 400);
  CheckSame(false, boxes, scores, 1000, 0.0f, nullptr);
  const TypedTensor dense = Boxes(rng, 1, 400, 40, 2, 1, 0);  // tiny boxes close together: neighbours overlap
  CheckSame(false, dense, scores, 1000, 0.0f, nullptr);
  CheckSame(false, dense, scores, 1000, 0.2f, nullptr);
}

TEST_CASE("NonMaxSuppression: the registry runs the pruned implementation") {
  std::string name;
  auto kernel = KernelRegistry::Default().Create(NmsInfo(false), &name);
  REQUIRE(kernel.ok());
  CHECK(name == "pruned");
}

}  // namespace
}  // namespace tilebank::engine::kernels
