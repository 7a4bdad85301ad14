// TensorBoard event files: TFRecord-framed `Event` protos (tensorboard/compat/proto/event.proto, summary.proto,
// tensor.proto). Only scalars become points:
//  - Summary.Value.simple_value (float): torch SummaryWriter.add_scalar, tensorboardX, HF TensorBoardCallback;
//  - Summary.Value.tensor holding one number, for tags whose plugin is "scalars" (torch add_scalar(new_style=True),
//    TF2 tf.summary.scalar). Writers attach the plugin metadata to the first value of a tag only, so the plugin
//    of each tag is remembered.
// Histograms, images, text and graphs are skipped. Points carry the record number in Point::line.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>

#include "io/protobuf_wire.h"
#include "io/record_format.h"
#include "io/source_files.h"
#include "io/tfrecord_framing.h"

namespace rldk::io {
namespace {

// Field numbers of the TensorBoard protos.
namespace event {
constexpr uint32_t WALL_TIME = 1, STEP = 2, FILE_VERSION = 3, SUMMARY = 5;
}
namespace summary {
constexpr uint32_t VALUE = 1;
}
namespace value {
constexpr uint32_t TAG = 1, SIMPLE_VALUE = 2, TENSOR = 8, METADATA = 9;
}
namespace metadata {
constexpr uint32_t PLUGIN_DATA = 1, PLUGIN_NAME = 1;
}
namespace tensor {
constexpr uint32_t DTYPE = 1, SHAPE = 2, CONTENT = 4, FLOAT_VAL = 5, DOUBLE_VAL = 6, INT_VAL = 7, INT64_VAL = 10,
                   BOOL_VAL = 11, HALF_VAL = 13;
constexpr uint32_t SHAPE_DIM = 2, DIM_SIZE = 1;
}
enum DataType : uint64_t { DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_INT64 = 9, DT_BOOL = 10, DT_BFLOAT16 = 14,
                           DT_HALF = 19 };

double half_to_double(uint16_t h) {
  int exponent = (h >> 10) & 0x1F;
  int mantissa = h & 0x3FF;
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31) return mantissa ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

double bfloat16_to_double(uint16_t b) {
  uint32_t bits = uint32_t{b} << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The single number a scalar tensor holds; false for anything else (several elements, strings, malformed).
bool tensor_scalar(std::string_view bytes, double& out) {
  uint64_t dtype = 0;
  std::vector<double> values;
  std::string_view content;
  pb::Reader r(bytes);
  pb::Field f;
  auto add_packed = [&](const pb::Field& field, auto decode) {
    if (field.type == pb::WireType::bytes) {
      std::string_view p = field.bytes;
      size_t pos = 0;
      while (pos < p.size()) {
        if (!decode(p, pos)) return false;
      }
      return true;
    }
    values.push_back(static_cast<double>(field.varint));
    return true;
  };
  while (r.next(f)) {
    switch (f.number) {
      case tensor::DTYPE: dtype = f.varint; break;
      case tensor::SHAPE: {
        // Any dimension other than 1 means more than one element (or none).
        pb::Reader shape(f.bytes);
        pb::Field dim;
        while (shape.next(dim)) {
          if (dim.number != tensor::SHAPE_DIM) continue;
          pb::Reader d(dim.bytes);
          pb::Field size;
          while (d.next(size)) {
            if (size.number == tensor::DIM_SIZE && size.varint != 1) return false;
          }
        }
        break;
      }
      case tensor::CONTENT: content = f.bytes; break;
      case tensor::FLOAT_VAL:
        if (f.type == pb::WireType::fixed32) {
          values.push_back(f.as_float());
        } else if (!add_packed(f, [&](std::string_view p, size_t& pos) {
                     if (p.size() - pos < 4) return false;
                     float v;
                     std::memcpy(&v, p.data() + pos, 4);
                     pos += 4;
                     values.push_back(v);
                     return true;
                   })) {
          return false;
        }
        break;
      case tensor::DOUBLE_VAL:
        if (f.type == pb::WireType::fixed64) {
          values.push_back(f.as_double());
        } else if (!add_packed(f, [&](std::string_view p, size_t& pos) {
                     if (p.size() - pos < 8) return false;
                     double v;
                     std::memcpy(&v, p.data() + pos, 8);
                     pos += 8;
                     values.push_back(v);
                     return true;
                   })) {
          return false;
        }
        break;
      case tensor::INT_VAL:
      case tensor::INT64_VAL:
      case tensor::BOOL_VAL:
      case tensor::HALF_VAL: {
        bool is_half = f.number == tensor::HALF_VAL;
        auto convert = [&](uint64_t raw) -> double {
          if (is_half) {
            auto bits = static_cast<uint16_t>(raw);
            return dtype == DT_BFLOAT16 ? bfloat16_to_double(bits) : half_to_double(bits);
          }
          if (f.number == tensor::INT_VAL) return static_cast<double>(static_cast<int32_t>(raw));
          if (f.number == tensor::BOOL_VAL) return raw != 0 ? 1.0 : 0.0;
          return static_cast<double>(static_cast<int64_t>(raw));
        };
        if (f.type == pb::WireType::varint) {
          values.push_back(convert(f.varint));
        } else if (f.type == pb::WireType::bytes) {
          size_t pos = 0;
          while (pos < f.bytes.size()) {
            uint64_t raw = 0;
            if (!pb::Reader::read_varint(f.bytes, pos, raw)) return false;
            values.push_back(convert(raw));
          }
        }
        break;
      }
      default: break;
    }
  }
  if (!r.ok()) return false;
  if (!content.empty()) {
    // Raw little-endian element bytes (TF's C++ writer): exactly one element of the declared type.
    switch (dtype) {
      case DT_FLOAT:
        if (content.size() != 4) return false;
        {
          float v;
          std::memcpy(&v, content.data(), 4);
          out = v;
        }
        return true;
      case DT_DOUBLE:
        if (content.size() != 8) return false;
        std::memcpy(&out, content.data(), 8);
        return true;
      case DT_INT32:
        if (content.size() != 4) return false;
        {
          int32_t v;
          std::memcpy(&v, content.data(), 4);
          out = v;
        }
        return true;
      case DT_INT64:
        if (content.size() != 8) return false;
        {
          int64_t v;
          std::memcpy(&v, content.data(), 8);
          out = static_cast<double>(v);
        }
        return true;
      case DT_HALF:
      case DT_BFLOAT16:
        if (content.size() != 2) return false;
        {
          uint16_t v;
          std::memcpy(&v, content.data(), 2);
          out = dtype == DT_HALF ? half_to_double(v) : bfloat16_to_double(v);
        }
        return true;
      default: return false;
    }
  }
  if (values.size() != 1) return false;
  out = values.front();
  return true;
}

std::string_view plugin_name(std::string_view metadata_bytes) {
  pb::Reader r(metadata_bytes);
  pb::Field f;
  while (r.next(f)) {
    if (f.number != metadata::PLUGIN_DATA || f.type != pb::WireType::bytes) continue;
    pb::Reader plugin(f.bytes);
    pb::Field p;
    while (plugin.next(p)) {
      if (p.number == metadata::PLUGIN_NAME && p.type == pb::WireType::bytes) return p.bytes;
    }
  }
  return {};
}

class TensorBoardFormat final : public RecordFormat {
 public:
  explicit TensorBoardFormat(ReadContext& context)
      : context_(context),
        framer_(context, [this](std::string_view data, uint64_t index, uint64_t offset) {
          event(data, index, offset);
        }) {}

  void feed(std::string_view bytes) override { framer_.feed(bytes); }
  void end_file() override {
    framer_.next_file();
    located_ = false;
  }
  void finish() override {
    framer_.finish();
    if (!file_version_.empty()) context_.emitter.meta_all("tensorboard_file_version", file_version_);
  }
  uint64_t records() const override { return framer_.records(); }
  std::string detail() const override {
    std::string kinds;
    if (simple_values_ > 0) kinds = "simple values";
    if (tensor_values_ > 0) kinds += std::string(kinds.empty() ? "" : ", ") + "scalar tensors";
    std::string d = "tensorboard (" + std::to_string(framer_.records()) + " records";
    if (!kinds.empty()) d += "; " + kinds;
    return d + ")";
  }

 private:
  // Where the file being read lies: in the run's log dir (the first file's folder), or in an add_scalars subfolder
  // of it (see tensorboard_log_files), whose key goes back into the metric's name.
  void locate_file() {
    located_ = true;
    std::filesystem::path folder = std::filesystem::path(context_.file).parent_path();
    if (!log_dir_) log_dir_ = folder.string();
    scalars_folder_ = folder.string() == *log_dir_ ? "" : folder.filename().string();
  }

  // The metric's name: the tag, or for an add_scalars subfolder's "reward" in reward_mean/, "reward/mean".
  std::string_view metric_name(std::string_view tag) {
    if (scalars_folder_.empty()) return tag;
    std::optional<std::string> key = add_scalars_key(tag, scalars_folder_);
    if (!key) return tag;
    renamed_.assign(tag).append("/").append(*key);
    return renamed_;
  }

  void event(std::string_view data, uint64_t index, uint64_t offset) {
    if (!located_) locate_file();
    double wall_time = NAN;
    int64_t step = 0;
    std::string_view summary_bytes;
    bool has_summary = false;
    pb::Reader r(data);
    pb::Field f;
    while (r.next(f)) {
      switch (f.number) {
        case event::WALL_TIME:
          if (f.type == pb::WireType::fixed64) wall_time = f.as_double();
          break;
        case event::STEP:
          if (f.type == pb::WireType::varint) step = f.as_int64();
          break;
        case event::FILE_VERSION:
          if (f.type == pb::WireType::bytes) file_version_.assign(f.bytes);
          break;
        case event::SUMMARY:
          if (f.type == pb::WireType::bytes) {
            summary_bytes = f.bytes;  // fields may come in any order: step can follow the summary
            has_summary = true;
          }
          break;
        default: break;
      }
    }
    if (!r.ok()) {
      bad_event(index, offset, "the event is not a valid Event message");
      return;
    }
    if (!has_summary) return;
    pb::Reader values(summary_bytes);
    pb::Field v;
    while (values.next(v)) {
      if (v.number == summary::VALUE && v.type == pb::WireType::bytes) summary_value(v.bytes, step, wall_time, index, offset);
    }
    if (!values.ok()) bad_event(index, offset, "the event's summary is not a valid Summary message");
  }

  void summary_value(std::string_view bytes, int64_t step, double wall_time, uint64_t index, uint64_t offset) {
    std::string_view tag, tensor_bytes, metadata_bytes;
    bool has_simple = false, has_tensor = false;
    float simple = 0.0f;
    pb::Reader r(bytes);
    pb::Field f;
    while (r.next(f)) {
      if (f.number == value::TAG && f.type == pb::WireType::bytes) tag = f.bytes;
      else if (f.number == value::SIMPLE_VALUE && f.type == pb::WireType::fixed32) {
        simple = f.as_float();
        has_simple = true;
      } else if (f.number == value::TENSOR && f.type == pb::WireType::bytes) {
        tensor_bytes = f.bytes;
        has_tensor = true;
      } else if (f.number == value::METADATA && f.type == pb::WireType::bytes) {
        metadata_bytes = f.bytes;
      }
    }
    if (!r.ok()) {
      bad_event(index, offset, "a summary value is malformed");
      return;
    }
    if (tag.empty()) return;
    if (!metadata_bytes.empty()) {
      std::string_view plugin = plugin_name(metadata_bytes);
      if (!plugin.empty()) plugins_[std::string(tag)] = std::string(plugin);
    }
    if (has_simple) {
      ++simple_values_;
      context_.emitter.emit({}, metric_name(tag), step, static_cast<double>(simple), wall_time, index);
      return;
    }
    if (!has_tensor) return;
    auto plugin = plugins_.find(std::string(tag));
    if (plugin == plugins_.end() || plugin->second != "scalars") return;
    double number = 0.0;
    if (!tensor_scalar(tensor_bytes, number)) {
      bad_event(index, offset, "scalar '" + std::string(tag) + "' holds no single number");
      return;
    }
    ++tensor_values_;
    context_.emitter.emit({}, metric_name(tag), step, number, wall_time, index);
  }

  void bad_event(uint64_t index, uint64_t offset, const std::string& why) {
    context_.diagnose("tensorboard_bad_event", 0,
                      "record " + std::to_string(index) + " at byte " + std::to_string(offset) + ": " + why +
                          "; skipped");
  }

  ReadContext& context_;
  TfRecordFramer framer_;
  std::string file_version_;
  bool located_ = false;
  std::optional<std::string> log_dir_;
  std::string scalars_folder_, renamed_;
  std::unordered_map<std::string, std::string> plugins_;  // tag -> plugin name, from the tag's first metadata
  uint64_t simple_values_ = 0;
  uint64_t tensor_values_ = 0;
};

}  // namespace

std::unique_ptr<RecordFormat> make_tensorboard_format(ReadContext& context) {
  return std::make_unique<TensorBoardFormat>(context);
}

}  // namespace rldk::io
