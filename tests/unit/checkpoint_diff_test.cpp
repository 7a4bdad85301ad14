// Checkpoint diff numerics: the older tool's value-head oracle, exact integer differences, NaN/Inf handling,
// thread-count independence, layer groups and deterministic top movers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "rldk/checkpoint.h"

namespace {

using rldk::ckpt::Checkpoint;
using rldk::ckpt::DType;
using rldk::ckpt::TensorView;

// An in-memory checkpoint: tensors viewing buffers the checkpoint keeps alive.
struct Builder {
  Checkpoint ckpt;
  template <class T>
  void add(const std::string& name, DType dtype, std::vector<uint64_t> shape, const std::vector<T>& values) {
    auto buf = std::make_shared<std::vector<T>>(values);
    TensorView t;
    t.name = name;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.numel = values.size();
    t.data = reinterpret_cast<const uint8_t*>(buf->data());
    t.nbytes = values.size() * sizeof(T);
    ckpt.tensors.push_back(t);
    ckpt.storage.push_back(buf);
    std::sort(ckpt.tensors.begin(), ckpt.tensors.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
  }
};

const rldk::ckpt::TensorDiff& find(const rldk::ckpt::CheckpointDiff& d, const std::string& name) {
  for (const auto& t : d.tensors) {
    if (t.name == name) return t;
  }
  throw std::runtime_error("no tensor " + name);
}

TEST(CheckpointDiff, ReproducesTheOlderToolsValueHeadEdit) {
  // Two untouched tensors; value_head.weight scaled by 1.1 (norm 8.57321); the bias moved by (0.1, 0.1).
  double w = 8.57321 / 2;
  Builder a, b;
  for (Builder* x : {&a, &b}) {
    x->add<double>("backbone.weight", DType::F64, {2}, {1.0, 2.0});
    x->add<double>("backbone.bias", DType::F64, {1}, {0.5});
  }
  a.add<double>("value_head.weight", DType::F64, {1, 4}, {w, w, w, w});
  b.add<double>("value_head.weight", DType::F64, {1, 4}, {1.1 * w, 1.1 * w, 1.1 * w, 1.1 * w});
  a.add<double>("value_head.bias", DType::F64, {2}, {3.1, 0.0});
  b.add<double>("value_head.bias", DType::F64, {2}, {3.2, 0.1});
  auto d = rldk::ckpt::diff_checkpoints(a.ckpt, b.ckpt, {});
  EXPECT_NEAR(find(d, "value_head.weight").l2, 0.857321, 5e-7);
  EXPECT_NEAR(find(d, "value_head.weight").cosine, 1.0, 5e-7);
  EXPECT_NEAR(find(d, "value_head.bias").l2, 0.141421, 5e-7);
  EXPECT_NEAR(find(d, "value_head.bias").cosine, 0.999512, 5e-7);
  EXPECT_NEAR(d.summary.avg_cosine, 0.999878, 5e-7);
  EXPECT_EQ(d.summary.l2_p05, 0.0);
  EXPECT_NEAR(d.summary.l2_p50, 0.0707107, 5e-8);
  EXPECT_NEAR(d.summary.l2_p95, 0.749936, 5e-7);
  ASSERT_EQ(d.top_movers.size(), 2u);
  EXPECT_EQ(d.tensors[d.top_movers[0]].name, "value_head.weight");
  EXPECT_EQ(d.summary.changed, 2u);
  EXPECT_EQ(d.summary.identical, 2u);
  ASSERT_EQ(d.groups.size(), 2u);  // head, other
  EXPECT_EQ(d.groups[0].name, "head");
}

TEST(CheckpointDiff, IntegersAreComparedExactly) {
  Builder a, b;
  a.add<int64_t>("ids", DType::I64, {3}, {(int64_t{1} << 62) + 1, -(int64_t{1} << 62), 7});
  b.add<int64_t>("ids", DType::I64, {3}, {(int64_t{1} << 62) + 3, -(int64_t{1} << 62), 7});
  a.add<uint64_t>("u", DType::U64, {1}, {~0ULL});
  b.add<uint64_t>("u", DType::U64, {1}, {0});
  auto d = rldk::ckpt::diff_checkpoints(a.ckpt, b.ckpt, {});
  EXPECT_EQ(find(d, "ids").max_abs_delta_exact, "2");
  EXPECT_EQ(find(d, "ids").changed_elements, 1u);
  EXPECT_EQ(find(d, "ids").l2, 2.0);
  EXPECT_EQ(find(d, "u").max_abs_delta_exact, "18446744073709551615");
}

TEST(CheckpointDiff, NonFiniteValuesAreCountedNotSummed) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Builder a, b;
  a.add<float>("x", DType::F32, {4}, {1.0f, static_cast<float>(nan), static_cast<float>(inf), 2.0f});
  b.add<float>("x", DType::F32, {4}, {1.5f, 3.0f, -static_cast<float>(inf), static_cast<float>(nan)});
  auto d = rldk::ckpt::diff_checkpoints(a.ckpt, b.ckpt, {});
  const auto& t = find(d, "x");
  EXPECT_EQ(t.nan_a, 1u);
  EXPECT_EQ(t.inf_a, 1u);
  EXPECT_EQ(t.nan_b, 1u);
  EXPECT_EQ(t.inf_b, 1u);
  EXPECT_EQ(t.l2, 0.5);  // only position 0 is finite on both sides
  EXPECT_EQ(t.changed_elements, 4u);
}

TEST(CheckpointDiff, ResultDoesNotDependOnThreads) {
  std::mt19937 rng(7);
  std::normal_distribution<float> n(0, 1);
  std::vector<float> x(3'000'001), y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = n(rng);
    y[i] = x[i] + 1e-3f * n(rng);
  }
  Builder a, b;
  a.add<float>("model.layers.0.w", DType::F32, {x.size()}, x);
  b.add<float>("model.layers.0.w", DType::F32, {y.size()}, y);
  rldk::ckpt::DiffOptions one, four;
  one.threads = 1;
  four.threads = 4;
  auto d1 = rldk::ckpt::diff_checkpoints(a.ckpt, b.ckpt, one);
  auto d4 = rldk::ckpt::diff_checkpoints(a.ckpt, b.ckpt, four);
  EXPECT_EQ(d1.tensors[0].l2, d4.tensors[0].l2);
  EXPECT_EQ(d1.tensors[0].cosine, d4.tensors[0].cosine);
  // Against a compensated (long double, sequential) reference.
  long double dd = 0, aa = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    long double d = static_cast<long double>(x[i]) - y[i];
    dd += d * d;
    aa += static_cast<long double>(x[i]) * x[i];
  }
  EXPECT_NEAR(d1.tensors[0].l2, std::sqrt(static_cast<double>(dd)), 1e-10 * std::sqrt(static_cast<double>(dd)));
  EXPECT_NEAR(d1.tensors[0].norm_a, std::sqrt(static_cast<double>(aa)), 1e-10 * std::sqrt(static_cast<double>(aa)));
}

TEST(CheckpointDiff, KeysShapesAndDtypes) {
  Builder a, b;
  a.add<float>("only_a", DType::F32, {1}, {1});
  b.add<float>("only_b", DType::F32, {1}, {1});
  a.add<float>("reshaped", DType::F32, {2}, {1, 2});
  b.add<float>("reshaped", DType::F32, {1, 2}, {1, 2});
  a.add<float>("cast", DType::F32, {2}, {1, 2});
  b.add<double>("cast", DType::F64, {2}, {1, 2});
  auto d = rldk::ckpt::diff_checkpoints(a.ckpt, b.ckpt, {});
  EXPECT_EQ(find(d, "only_a").status, rldk::ckpt::TensorStatus::only_in_a);
  EXPECT_EQ(find(d, "only_b").status, rldk::ckpt::TensorStatus::only_in_b);
  EXPECT_EQ(find(d, "reshaped").status, rldk::ckpt::TensorStatus::shape_mismatch);
  EXPECT_EQ(find(d, "cast").status, rldk::ckpt::TensorStatus::identical);
  EXPECT_FALSE(find(d, "cast").identical_bytes);
  EXPECT_EQ(d.summary.dtype_mismatch, 1u);
  EXPECT_TRUE(d.differs());
}

TEST(CheckpointDiff, TopMoversTieByName) {
  Builder a, b;
  for (const char* name : {"c", "a", "b"}) {
    a.add<float>(name, DType::F32, {1}, {0});
    b.add<float>(name, DType::F32, {1}, {1});
  }
  auto d = rldk::ckpt::diff_checkpoints(a.ckpt, b.ckpt, {});
  ASSERT_EQ(d.top_movers.size(), 3u);
  EXPECT_EQ(d.tensors[d.top_movers[0]].name, "a");
  EXPECT_EQ(d.tensors[d.top_movers[2]].name, "c");
}

TEST(CheckpointDiff, LayerGroups) {
  int64_t i = 0;
  std::string name;
  EXPECT_EQ(rldk::ckpt::layer_group("model.layers.12.mlp.up_proj.weight", i, &name), rldk::ckpt::GroupKind::block);
  EXPECT_EQ(i, 12);
  EXPECT_EQ(name, "layers.12");
  EXPECT_EQ(rldk::ckpt::layer_group("transformer.h.3.attn.c_attn.weight", i, &name), rldk::ckpt::GroupKind::block);
  EXPECT_EQ(name, "h.3");
  EXPECT_EQ(rldk::ckpt::layer_group("blocks.0.ln", i), rldk::ckpt::GroupKind::block);
  EXPECT_EQ(rldk::ckpt::layer_group("model.embed_tokens.weight", i), rldk::ckpt::GroupKind::embedding);
  EXPECT_EQ(rldk::ckpt::layer_group("transformer.wte.weight", i), rldk::ckpt::GroupKind::embedding);
  EXPECT_EQ(rldk::ckpt::layer_group("lm_head.weight", i), rldk::ckpt::GroupKind::head);
  EXPECT_EQ(rldk::ckpt::layer_group("v_head.summary.weight", i), rldk::ckpt::GroupKind::head);
  EXPECT_EQ(rldk::ckpt::layer_group("score.weight", i), rldk::ckpt::GroupKind::head);
  EXPECT_EQ(rldk::ckpt::layer_group("model.norm.weight", i, &name), rldk::ckpt::GroupKind::other);
  EXPECT_EQ(name, "other");
  EXPECT_EQ(rldk::ckpt::layer_group("h.x.w", i), rldk::ckpt::GroupKind::other);
}

TEST(CheckpointDiff, HtmlEscapesTensorNames) {
  Builder a, b;
  a.add<float>("<img src=x onerror=alert(1)>", DType::F32, {1}, {0});
  b.add<float>("<img src=x onerror=alert(1)>", DType::F32, {1}, {1});
  auto d = rldk::ckpt::diff_checkpoints(a.ckpt, b.ckpt, {});
  std::string html = rldk::ckpt::ckpt_diff_html(d);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("&lt;img"), std::string::npos);
  std::string md = rldk::ckpt::ckpt_diff_markdown(d);
  // Markdown shows names in code spans, which renderers print verbatim instead of interpreting.
  EXPECT_NE(md.find("`<img src=x onerror=alert(1)>`"), std::string::npos);
}

}  // namespace
