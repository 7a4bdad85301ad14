// Checkpoint diff: read the tensor table of a model checkpoint (safetensors, sharded safetensors, a Hugging Face model
// folder, a torch.save zip file) without loading it — files are memory-mapped and tensors are views into them — and
// compare two checkpoints tensor by tensor, group by group (embedding, transformer blocks, heads), or a series of
// training checkpoints against the first one.
//
// Torch files are read by a restricted pickle reader that never executes code: it understands the fixed set of
// opcodes torch.save writes and accepts only an allowlist of globals (the idea of torch.load(weights_only=True)).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rldk/json.h"
#include "rldk/result.h"

namespace rldk::ckpt {

// Element types. The numeric ones are decoded and compared; the others (sub-byte floats, complex) are only compared
// byte for byte.
enum class DType : uint8_t {
  F64, F32, F16, BF16, F8_E4M3, F8_E5M2,
  I64, I32, I16, I8, U64, U32, U16, U8, BOOL,
  // Known to safetensors but not decoded here.
  C64, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, F6_E2M3, F6_E3M2, F4,
};

const char* dtype_name(DType dtype);   // safetensors spelling: "F32", "BF16", "F8_E4M3", ...
unsigned dtype_bits(DType dtype);      // bits per element (4 for F4, 6 for F6_*)
bool dtype_is_float(DType dtype);      // decoded as floating point (F64 ... F8_E5M2)
bool dtype_is_integer(DType dtype);    // decoded as exact integers (I*, U*, BOOL)

// One tensor: a contiguous little-endian row-major view of `nbytes` bytes at `data`, valid while the Checkpoint that
// holds it lives.
struct TensorView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<uint64_t> shape;
  uint64_t numel = 0;
  const uint8_t* data = nullptr;
  uint64_t nbytes = 0;
  std::string file;  // the file it was read from (a shard, the .pt)
};

struct Checkpoint {
  std::string path;    // as given
  std::string format;  // "safetensors", "safetensors-sharded", "torch-zip", "torch-zip-sharded"
  std::vector<TensorView> tensors;            // sorted by name
  std::map<std::string, std::string> metadata;  // safetensors __metadata__ (of the first shard)
  std::vector<std::shared_ptr<const void>> storage;  // mappings and the few copied (non-contiguous) tensors
  uint64_t total_bytes() const;
};

// Reads a checkpoint file or folder. Errors name the file and what is wrong (ErrorCode::unrecognized for a file
// that is not a valid checkpoint, including refused pickles; not_found/unreadable for I/O).
Result<Checkpoint> read_checkpoint(const std::string& path);

// ----- diff -----

struct DiffOptions {
  unsigned threads = 0;         // worker threads; 0: all hardware threads
  size_t top = 20;              // top movers listed
  double tolerance = 0;         // a tensor counts as changed when its relative change is above this (0: any change)
  std::string label_a = "A";    // how the report names the sides ("reference", "policy", ...)
  std::string label_b = "B";
};

enum class TensorStatus : uint8_t { identical, changed, unchanged_within_tolerance, shape_mismatch, only_in_a,
                                    only_in_b, not_compared };
const char* status_name(TensorStatus status);

struct TensorDiff {
  std::string name;
  TensorStatus status = TensorStatus::identical;
  std::string dtype_a, dtype_b;              // empty on the side that lacks the tensor
  std::vector<uint64_t> shape_a, shape_b;
  uint64_t numel = 0;                        // compared elements (0 unless the shapes match)
  bool identical_bytes = false;
  // Statistics over the positions where both values are finite (NaN/Inf are counted, not summed).
  double l2 = 0;                // ||a - b||
  double norm_a = 0, norm_b = 0;
  double relative_change = 0;   // ||a - b|| / ||a||; 0 when both are 0, +inf when only a is 0
  double cosine = 1;            // a.b / (||a|| ||b||); 1 when both norms are 0, 0 when one is
  double max_abs_delta = 0;
  std::string max_abs_delta_exact;  // integer tensors: the exact |a - b| maximum in decimal
  uint64_t changed_elements = 0;    // positions whose values differ (NaN == NaN here)
  uint64_t nan_a = 0, inf_a = 0, nan_b = 0, inf_b = 0;
  std::string note;
};

enum class GroupKind : uint8_t { embedding, block, head, other };

struct GroupDiff {
  std::string name;   // "embedding", "layers.3", "head", "other"
  GroupKind kind = GroupKind::other;
  int64_t index = -1;  // block number for blocks
  size_t tensors = 0, changed = 0;
  uint64_t numel = 0;
  double l2 = 0, norm_a = 0, relative_change = 0, cosine = 1, max_abs_delta = 0;
};

struct DiffSummary {
  size_t tensors_a = 0, tensors_b = 0, common = 0, compared = 0, only_in_a = 0, only_in_b = 0, shape_mismatch = 0,
         dtype_mismatch = 0, identical = 0, changed = 0;
  uint64_t numel_compared = 0, bytes_a = 0, bytes_b = 0;
  uint64_t nan_a = 0, inf_a = 0, nan_b = 0, inf_b = 0;
  double l2 = 0, norm_a = 0, relative_change = 0, cosine = 1, max_abs_delta = 0;
  double avg_cosine = 1;  // mean of the per-tensor cosines of compared tensors
  double l2_p05 = 0, l2_p50 = 0, l2_p95 = 0;  // linear-interpolated percentiles of per-tensor L2 (compared tensors)
};

struct CheckpointDiff {
  std::string path_a, path_b, format_a, format_b;
  std::string label_a, label_b;
  DiffSummary summary;
  std::vector<TensorDiff> tensors;   // by name
  std::vector<GroupDiff> groups;     // embedding, blocks by number, head, other
  std::vector<size_t> top_movers;    // indexes into tensors: L2 descending, ties by name
  bool differs() const;              // any changed tensor, shape mismatch or one-sided key
};

CheckpointDiff diff_checkpoints(const Checkpoint& a, const Checkpoint& b, const DiffOptions& options);

// The layer group of a tensor name: embedding, a block (layers.N, h.N, blocks.N, layer.N), a head (lm_head,
// value_head, v_head, score, classifier) or other. `group_name`, if given, receives the group's name: "embedding",
// the block as the model spells it ("layers.3", "h.3"), "head" or "other".
GroupKind layer_group(std::string_view name, int64_t& block_index, std::string* group_name = nullptr);

// ----- series: checkpoint-*/ folders of one run, each against the first -----

struct SeriesPoint {
  std::string path;
  int64_t step = 0;
  CheckpointDiff diff;  // against the baseline checkpoint
};

struct SeriesDiff {
  std::string run_dir;
  std::string baseline;  // "first" or "previous"
  std::vector<std::string> checkpoints;  // all, sorted by step
  std::vector<int64_t> steps;
  std::vector<SeriesPoint> points;       // one per checkpoint after the first
};

// Finds checkpoint-<step>/ folders in `run_dir`, sorted by step, and diffs each against the first ("first") or
// against the one before it ("previous").
Result<SeriesDiff> diff_series(const std::string& run_dir, const std::string& baseline, const DiffOptions& options);

// ----- reports -----

inline constexpr const char* CKPT_DIFF_SCHEMA = "rldk.ckpt-diff/v1";

Json ckpt_diff_json(const CheckpointDiff& diff);
std::string ckpt_diff_text(const CheckpointDiff& diff, size_t max_rows = 20);
std::string ckpt_diff_markdown(const CheckpointDiff& diff);
std::string ckpt_diff_html(const CheckpointDiff& diff);

Json ckpt_series_json(const SeriesDiff& series);
std::string ckpt_series_text(const SeriesDiff& series);
std::string ckpt_series_markdown(const SeriesDiff& series);
std::string ckpt_series_html(const SeriesDiff& series);

}  // namespace rldk::ckpt
