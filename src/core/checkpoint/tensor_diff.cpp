// The numeric core of checkpoint diff. Both checkpoints are read in place; each tensor pair is cut into fixed-size
// chunks that a small pool of threads reduces independently, then the chunk partials are added in chunk order, so the
// result does not depend on the thread count. Sums are kept in double with eight interleaved accumulators per chunk
// (the compiler turns the fixed-width inner loop into SIMD code, and the split keeps rounding error far below 1e-9
// relative); products of two f32 or narrower values are exact in double.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <thread>

#include "checkpoint/tensor_values.h"
#include "rldk/checkpoint.h"

namespace rldk::ckpt {
namespace {

constexpr size_t BLOCK = 1024;          // elements decoded at a time (stays in L1)
constexpr uint64_t CHUNK = 1ULL << 20;  // elements per work item
constexpr int LANES = 8;

struct Accum {
  double aa = 0, bb = 0, dd = 0, ab = 0, max = 0;
  uint64_t changed = 0, nan_a = 0, inf_a = 0, nan_b = 0, inf_b = 0;
  UInt128 max_int = 0;
  bool identical = true;

  void add(const Accum& o) {
    aa += o.aa;
    bb += o.bb;
    dd += o.dd;
    ab += o.ab;
    max = std::max(max, o.max);
    changed += o.changed;
    nan_a += o.nan_a;
    inf_a += o.inf_a;
    nan_b += o.nan_b;
    inf_b += o.inf_b;
    max_int = std::max(max_int, o.max_int);
    identical = identical && o.identical;
  }
};

// Statistics of one decoded block of exactly BLOCK values per side (callers pad with zeros, which add nothing).
// Non-finite values are counted and left out of the sums, so one NaN does not erase a tensor's statistics.
// Written with the compiler's vector types (GCC and Clang) at SSE2's native width of two doubles, four of them side
// by side: lane j sums elements j, j+LANES, ... Without -ffast-math a compiler may not reorder a floating-point sum
// itself, so the lanes are spelled out. Comparison masks are all-ones integers and selects are bitwise.
typedef double Vec2 __attribute__((vector_size(16)));
typedef int64_t Mask2 __attribute__((vector_size(16)));
constexpr int WIDTH = 2;
constexpr int UNROLL = LANES / WIDTH;

void float_block(const double* a, const double* b, Accum& acc) {
  Vec2 aa[UNROLL] = {}, bb[UNROLL] = {}, dd[UNROLL] = {}, ab[UNROLL] = {}, mx[UNROLL] = {};
  Mask2 ch[UNROLL] = {}, na[UNROLL] = {}, ia[UNROLL] = {}, nb[UNROLL] = {}, ib[UNROLL] = {};
  const Mask2 abs_mask = {INT64_MAX, INT64_MAX};
  for (size_t i = 0; i < BLOCK; i += LANES) {
    for (int k = 0; k < UNROLL; ++k) {
      Vec2 x, y;
      std::memcpy(&x, a + i + WIDTH * k, sizeof x);
      std::memcpy(&y, b + i + WIDTH * k, sizeof y);
      Mask2 xnan = x != x, ynan = y != y;
      Mask2 xfin = (x - x) == 0, yfin = (y - y) == 0;  // false for NaN and +-Inf
      Mask2 both = xfin & yfin;
      Vec2 xm = reinterpret_cast<Vec2>(reinterpret_cast<Mask2>(x) & both);
      Vec2 ym = reinterpret_cast<Vec2>(reinterpret_cast<Mask2>(y) & both);
      Vec2 d = xm - ym;
      aa[k] += xm * xm;
      bb[k] += ym * ym;
      dd[k] += d * d;
      ab[k] += xm * ym;
      Vec2 ad = reinterpret_cast<Vec2>(reinterpret_cast<Mask2>(d) & abs_mask);
      Mask2 bigger = ad > mx[k];
      mx[k] = reinterpret_cast<Vec2>((reinterpret_cast<Mask2>(ad) & bigger) | (reinterpret_cast<Mask2>(mx[k]) & ~bigger));
      ch[k] -= (x != y) & ~(xnan & ynan);  // masks are -1: subtracting counts up
      na[k] -= xnan;
      nb[k] -= ynan;
      ia[k] -= ~(xfin | xnan);
      ib[k] -= ~(yfin | ynan);
    }
  }
  Accum part;
  for (int k = 0; k < UNROLL; ++k) {
    for (int j = 0; j < WIDTH; ++j) {
      part.aa += aa[k][j];
      part.bb += bb[k][j];
      part.dd += dd[k][j];
      part.ab += ab[k][j];
      part.max = std::max(part.max, mx[k][j]);
      part.changed += static_cast<uint64_t>(ch[k][j]);
      part.nan_a += static_cast<uint64_t>(na[k][j]);
      part.nan_b += static_cast<uint64_t>(nb[k][j]);
      part.inf_a += static_cast<uint64_t>(ia[k][j]);
      part.inf_b += static_cast<uint64_t>(ib[k][j]);
    }
  }
  part.identical = acc.identical;
  acc.add(part);
}

// Integer tensors: differences are exact 128-bit integers; only the squares summed for L2 and cosine are doubles.
void int_block(const Int128* a, const Int128* b, size_t n, Accum& acc) {
  for (size_t i = 0; i < n; ++i) {
    Int128 d = a[i] - b[i];
    UInt128 ad = d < 0 ? static_cast<UInt128>(-d) : static_cast<UInt128>(d);
    double x = static_cast<double>(a[i]), y = static_cast<double>(b[i]), dd = static_cast<double>(d);
    acc.aa += x * x;
    acc.bb += y * y;
    acc.ab += x * y;
    acc.dd += dd * dd;
    acc.max_int = std::max(acc.max_int, ad);
    acc.changed += d != 0 ? 1 : 0;
  }
  acc.max = std::max(acc.max, static_cast<double>(acc.max_int));
}

struct Pair {
  const TensorView* a;
  const TensorView* b;
  size_t diff_index;
  bool integer;  // both sides integer/bool
};

struct WorkItem {
  size_t pair;
  uint64_t begin, end;
};

void run_chunk(const Pair& p, uint64_t begin, uint64_t end, Accum& acc) {
  const TensorView& a = *p.a;
  const TensorView& b = *p.b;
  size_t ea = dtype_bits(a.dtype) / 8, eb = dtype_bits(b.dtype) / 8;
  bool same_dtype = a.dtype == b.dtype;
  if (same_dtype) {
    acc.identical = std::memcmp(a.data + begin * ea, b.data + begin * eb, (end - begin) * ea) == 0;
  } else {
    acc.identical = false;
  }
  if (p.integer) {
    Int128 xa[BLOCK], xb[BLOCK];
    for (uint64_t at = begin; at < end; at += BLOCK) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(BLOCK, end - at));
      decode_to_int(a.dtype, a.data + at * ea, n, xa);
      decode_to_int(b.dtype, b.data + at * eb, n, xb);
      int_block(xa, xb, n, acc);
    }
    return;
  }
  alignas(64) double xa[BLOCK], xb[BLOCK];
  for (uint64_t at = begin; at < end; at += BLOCK) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(BLOCK, end - at));
    decode_to_double(a.dtype, a.data + at * ea, n, xa);
    if (acc.identical) {
      // Same bytes: b's values are a's; skip decoding them again.
      std::memcpy(xb, xa, n * sizeof(double));
    } else {
      decode_to_double(b.dtype, b.data + at * eb, n, xb);
    }
    if (n < BLOCK) {
      std::fill(xa + n, xa + BLOCK, 0.0);
      std::fill(xb + n, xb + BLOCK, 0.0);
    }
    float_block(xa, xb, acc);
  }
}

std::string u128_string(UInt128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v > 0) {
    s += static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  }
  return {s.rbegin(), s.rend()};
}

double relative(double l2, double norm_a) {
  if (norm_a > 0) return l2 / norm_a;
  return l2 == 0 ? 0.0 : std::numeric_limits<double>::infinity();
}

double cosine_of(double ab, double na, double nb) {
  if (na == 0 && nb == 0) return 1.0;
  if (na == 0 || nb == 0) return 0.0;
  return ab / (na * nb);
}

// numpy's default (linear) percentile.
double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

}  // namespace

const char* status_name(TensorStatus status) {
  switch (status) {
    case TensorStatus::identical: return "identical";
    case TensorStatus::changed: return "changed";
    case TensorStatus::unchanged_within_tolerance: return "within_tolerance";
    case TensorStatus::shape_mismatch: return "shape_mismatch";
    case TensorStatus::only_in_a: return "only_in_a";
    case TensorStatus::only_in_b: return "only_in_b";
    case TensorStatus::not_compared: return "not_compared";
  }
  return "?";
}

bool CheckpointDiff::differs() const {
  return summary.changed > 0 || summary.shape_mismatch > 0 || summary.only_in_a > 0 || summary.only_in_b > 0 ||
         summary.dtype_mismatch > 0;
}

CheckpointDiff diff_checkpoints(const Checkpoint& a, const Checkpoint& b, const DiffOptions& options) {
  CheckpointDiff out;
  out.path_a = a.path;
  out.path_b = b.path;
  out.format_a = a.format;
  out.format_b = b.format;
  out.label_a = options.label_a;
  out.label_b = options.label_b;
  DiffSummary& s = out.summary;
  s.tensors_a = a.tensors.size();
  s.tensors_b = b.tensors.size();
  s.bytes_a = a.total_bytes();
  s.bytes_b = b.total_bytes();

  // Merge the two name-sorted tables.
  std::vector<Pair> pairs;
  size_t i = 0, j = 0;
  while (i < a.tensors.size() || j < b.tensors.size()) {
    TensorDiff d;
    const TensorView* ta = nullptr;
    const TensorView* tb = nullptr;
    if (j == b.tensors.size() || (i < a.tensors.size() && a.tensors[i].name < b.tensors[j].name)) {
      ta = &a.tensors[i++];
    } else if (i == a.tensors.size() || b.tensors[j].name < a.tensors[i].name) {
      tb = &b.tensors[j++];
    } else {
      ta = &a.tensors[i++];
      tb = &b.tensors[j++];
    }
    d.name = ta != nullptr ? ta->name : tb->name;
    if (ta != nullptr) {
      d.dtype_a = dtype_name(ta->dtype);
      d.shape_a = ta->shape;
    }
    if (tb != nullptr) {
      d.dtype_b = dtype_name(tb->dtype);
      d.shape_b = tb->shape;
    }
    if (ta == nullptr || tb == nullptr) {
      d.status = ta != nullptr ? TensorStatus::only_in_a : TensorStatus::only_in_b;
      ++(ta != nullptr ? s.only_in_a : s.only_in_b);
    } else {
      ++s.common;
      if (ta->dtype != tb->dtype) ++s.dtype_mismatch;
      bool numeric = (dtype_is_float(ta->dtype) || dtype_is_integer(ta->dtype)) &&
                     (dtype_is_float(tb->dtype) || dtype_is_integer(tb->dtype));
      if (ta->shape != tb->shape) {
        d.status = TensorStatus::shape_mismatch;
        ++s.shape_mismatch;
      } else if (!numeric) {
        d.identical_bytes = ta->dtype == tb->dtype && ta->nbytes == tb->nbytes &&
                            (ta->nbytes == 0 || std::memcmp(ta->data, tb->data, ta->nbytes) == 0);
        d.status = d.identical_bytes ? TensorStatus::identical : TensorStatus::not_compared;
        d.note = std::string("dtype ") + dtype_name(ta->dtype) + " is compared byte for byte only";
        if (d.identical_bytes) ++s.identical;
        else ++s.changed;
      } else {
        d.numel = ta->numel;
        pairs.push_back({ta, tb, out.tensors.size(), dtype_is_integer(ta->dtype) && dtype_is_integer(tb->dtype)});
      }
    }
    out.tensors.push_back(std::move(d));
  }

  // Work items: every compared pair cut into chunks; partials land in a fixed slot each.
  std::vector<WorkItem> work;
  std::vector<size_t> first_item(pairs.size());
  for (size_t p = 0; p < pairs.size(); ++p) {
    first_item[p] = work.size();
    uint64_t n = pairs[p].a->numel;
    if (n == 0) work.push_back({p, 0, 0});
    for (uint64_t at = 0; at < n; at += CHUNK) work.push_back({p, at, std::min(n, at + CHUNK)});
  }
  std::vector<Accum> partial(work.size());
  unsigned threads = options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(1, work.size())));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k = next.fetch_add(1); k < work.size(); k = next.fetch_add(1)) {
      run_chunk(pairs[work[k].pair], work[k].begin, work[k].end, partial[k]);
    }
  };
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }

  std::vector<double> l2s, cosines;
  Accum total;
  std::vector<Accum> accs(pairs.size());
  for (size_t p = 0; p < pairs.size(); ++p) {
    Accum& acc = accs[p];
    size_t end = p + 1 < pairs.size() ? first_item[p + 1] : work.size();
    for (size_t k = first_item[p]; k < end; ++k) acc.add(partial[k]);
    TensorDiff& d = out.tensors[pairs[p].diff_index];
    d.identical_bytes = acc.identical && pairs[p].a->dtype == pairs[p].b->dtype;
    d.l2 = std::sqrt(acc.dd);
    d.norm_a = std::sqrt(acc.aa);
    d.norm_b = std::sqrt(acc.bb);
    d.relative_change = relative(d.l2, d.norm_a);
    d.cosine = cosine_of(acc.ab, d.norm_a, d.norm_b);
    d.max_abs_delta = acc.max;
    if (pairs[p].integer) d.max_abs_delta_exact = u128_string(acc.max_int);
    d.changed_elements = acc.changed;
    d.nan_a = acc.nan_a;
    d.inf_a = acc.inf_a;
    d.nan_b = acc.nan_b;
    d.inf_b = acc.inf_b;
    if (d.identical_bytes || (acc.changed == 0 && pairs[p].a->dtype == pairs[p].b->dtype)) {
      d.status = TensorStatus::identical;
      ++s.identical;
    } else if (d.relative_change <= options.tolerance && acc.changed > 0 && options.tolerance > 0) {
      d.status = TensorStatus::unchanged_within_tolerance;
    } else if (acc.changed == 0) {
      d.status = TensorStatus::identical;  // same values in another dtype
      ++s.identical;
    } else {
      d.status = TensorStatus::changed;
      ++s.changed;
    }
    ++s.compared;
    s.numel_compared += d.numel;
    l2s.push_back(d.l2);
    cosines.push_back(d.cosine);
    total.add(acc);
  }
  s.nan_a = total.nan_a;
  s.inf_a = total.inf_a;
  s.nan_b = total.nan_b;
  s.inf_b = total.inf_b;
  s.l2 = std::sqrt(total.dd);
  s.norm_a = std::sqrt(total.aa);
  s.relative_change = relative(s.l2, s.norm_a);
  s.cosine = cosine_of(total.ab, s.norm_a, std::sqrt(total.bb));
  s.max_abs_delta = total.max;
  double csum = 0;
  for (double c : cosines) csum += c;
  s.avg_cosine = cosines.empty() ? 1.0 : csum / static_cast<double>(cosines.size());
  s.l2_p05 = percentile(l2s, 0.05);
  s.l2_p50 = percentile(l2s, 0.50);
  s.l2_p95 = percentile(l2s, 0.95);

  // Groups: concatenate the tensors of a group, i.e. add their sums.
  struct GroupAcc {
    GroupDiff g;
    double dd = 0, aa = 0, bb = 0, ab = 0;
  };
  std::map<std::pair<int, int64_t>, std::map<std::string, GroupAcc>> groups;  // ordered by kind, index, name
  for (size_t p = 0; p < pairs.size(); ++p) {
    const TensorDiff& d = out.tensors[pairs[p].diff_index];
    int64_t index = -1;
    std::string name;
    GroupKind kind = layer_group(d.name, index, &name);
    int order = kind == GroupKind::embedding ? 0 : kind == GroupKind::block ? 1 : kind == GroupKind::head ? 2 : 3;
    GroupAcc& g = groups[{order, index}][name];
    g.g.name = name;
    g.g.kind = kind;
    g.g.index = index;
    ++g.g.tensors;
    if (d.status == TensorStatus::changed) ++g.g.changed;
    g.g.numel += d.numel;
    g.dd += accs[p].dd;
    g.aa += accs[p].aa;
    g.bb += accs[p].bb;
    g.ab += accs[p].ab;
    g.g.max_abs_delta = std::max(g.g.max_abs_delta, d.max_abs_delta);
  }
  for (auto& [key, by_name] : groups) {
    for (auto& [name, g] : by_name) {
      g.g.l2 = std::sqrt(g.dd);
      g.g.norm_a = std::sqrt(g.aa);
      g.g.relative_change = relative(g.g.l2, g.g.norm_a);
      g.g.cosine = cosine_of(g.ab, g.g.norm_a, std::sqrt(g.bb));
      out.groups.push_back(g.g);
    }
  }

  // Top movers: largest L2 first, ties by name (tensors are already in name order, so a stable sort keeps it).
  std::vector<size_t> movers;
  for (const auto& p : pairs) {
    if (out.tensors[p.diff_index].status == TensorStatus::changed) movers.push_back(p.diff_index);
  }
  std::stable_sort(movers.begin(), movers.end(),
                   [&](size_t x, size_t y) { return out.tensors[x].l2 > out.tensors[y].l2; });
  if (movers.size() > options.top) movers.resize(options.top);
  out.top_movers = std::move(movers);
  return out;
}

}  // namespace rldk::ckpt
