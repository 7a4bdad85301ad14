// Checkpoint readers: safetensors header validation (every rule of the format), dtype decoding, the ZIP directory
// (including ZIP64) and the restricted pickle reader (what torch.save writes is read; anything that would run code is
// refused at the opcode).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "checkpoint/readers.h"
#include "checkpoint/restricted_pickle.h"
#include "checkpoint/tensor_values.h"
#include "checkpoint/zip_archive.h"
#include "rldk/checkpoint.h"
#include "test_support.h"

namespace {

using namespace std::string_literals;
using rldk::ckpt::DType;
using rldk::ckpt::TensorView;

std::string u64le(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}

std::string st_file(const std::string& header, const std::string& data) { return u64le(header.size()) + header + data; }

std::string floats(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  size_t i = 0;
  for (float f : v) std::memcpy(&s[4 * i++], &f, 4);
  return s;
}

rldk::Status parse(const std::string& file, std::vector<TensorView>& out) {
  std::map<std::string, std::string> meta;
  return rldk::ckpt::parse_safetensors(file, "x.safetensors", out, meta);
}

TEST(CheckpointSafetensors, ValidFileWithPaddingAndMetadata) {
  std::string header = R"({"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},)"
                       R"("a":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"s":{"dtype":"I64","shape":[0],)"
                       R"("data_offsets":[12,12]}})";
  header += std::string(8 - header.size() % 8, ' ');
  std::string data = std::string("\x80\x3f\x00\x40\x00\x00\x80\xbf", 8) + floats({2.5f});
  std::string file = st_file(header, data);
  std::vector<TensorView> t;
  std::map<std::string, std::string> meta;
  ASSERT_TRUE(rldk::ckpt::parse_safetensors(file, "x", t, meta).ok());
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(meta.at("format"), "pt");
  EXPECT_EQ(t[0].name, "b");
  EXPECT_EQ(t[1].dtype, DType::BF16);
  EXPECT_EQ(t[1].shape, (std::vector<uint64_t>{2, 2}));
  double v[4];
  rldk::ckpt::decode_to_double(DType::BF16, t[1].data, 4, v);
  EXPECT_EQ(v[0], 1.0);
  EXPECT_EQ(v[1], 2.0);
  EXPECT_EQ(v[2], 0.0);
  EXPECT_EQ(v[3], -1.0);
  EXPECT_EQ(t[2].numel, 0u);
}

struct BadCase {
  const char* what;
  std::string file;
  const char* message;
};

TEST(CheckpointSafetensors, LyingHeadersAreRefusedWithTheReason) {
  const std::string f4 = floats({1, 2, 3, 4});
  std::vector<BadCase> cases = {
      {"shorter than 8", "abc", "shorter than the 8-byte header size"},
      {"size past end", u64le(1000) + "{}", "larger than the rest of the file"},
      {"huge", u64le(~0ULL) + "{}", "above the 100000000-byte limit"},
      {"no brace", st_file(" {}", ""), "does not start with '{'"},
      {"not json", st_file("{\"a\":", ""), "header JSON"},
      {"dup", st_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", f4.substr(0, 4)), "duplicate key \"a\""},
      {"dtype", st_file(R"({"a":{"dtype":"Q8","shape":[1],"data_offsets":[0,1]}})", "x"), "unknown dtype \"Q8\""},
      {"numel", st_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", f4), "need 12"},
      {"overlap", st_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", f4.substr(0, 12)), "overlapping"},
      {"hole", st_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})", f4.substr(0, 12)), "hole"},
      {"not from 0", st_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", f4.substr(0, 8)), "hole"},
      {"trailing bytes", st_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", f4), "cover 4 bytes of data but the file holds 16"},
      {"truncated", st_file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", f4.substr(0, 10)), "cover 16 bytes"},
      {"end before begin", st_file(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})", ""), "END is before BEGIN"},
      {"overflow", st_file(R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", f4.substr(0, 8)), "overflows"},
      {"negative dim", st_file(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", f4.substr(0, 4)), "non-negative integer"},
      {"metadata value", st_file(R"({"__metadata__":{"k":1}})", ""), "is not a string"},
      {"sub-byte", st_file(R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", "ab"), "byte boundary"},
      {"offsets shape", st_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", f4.substr(0, 4)), "[BEGIN, END]"},
  };
  for (const auto& c : cases) {
    std::vector<TensorView> t;
    auto st = parse(c.file, t);
    ASSERT_FALSE(st.ok()) << c.what;
    EXPECT_NE(st.error().message.find(c.message), std::string::npos) << c.what << ": " << st.error().message;
    EXPECT_EQ(st.error().context, "x.safetensors") << c.what;
  }
}

TEST(CheckpointDTypes, BitConversionsMatchTheFormats) {
  using namespace rldk::ckpt;
  EXPECT_EQ(half_to_double(0x3c00), 1.0);
  EXPECT_EQ(half_to_double(0xc000), -2.0);
  EXPECT_EQ(half_to_double(0x0001), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(half_to_double(0x03ff), std::ldexp(1023.0, -24));
  EXPECT_EQ(half_to_double(0x7bff), 65504.0);
  EXPECT_EQ(half_to_double(0x7c00), std::numeric_limits<double>::infinity());
  EXPECT_EQ(half_to_double(0xfc00), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(half_to_double(0x7e00)));
  EXPECT_EQ(half_to_double(0x8000), 0.0);
  EXPECT_TRUE(std::signbit(half_to_double(0x8000)));
  EXPECT_EQ(bf16_to_double(0x3f80), 1.0);
  EXPECT_EQ(bf16_to_double(0x7f80), std::numeric_limits<double>::infinity());
  EXPECT_EQ(f8_e4m3_to_double(0x7e), 448.0);
  EXPECT_TRUE(std::isnan(f8_e4m3_to_double(0x7f)));
  EXPECT_TRUE(std::isnan(f8_e4m3_to_double(0xff)));
  EXPECT_EQ(f8_e4m3_to_double(0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(f8_e4m3_to_double(0x38), 1.0);
  EXPECT_EQ(f8_e4m3_to_double(0xc0), -2.0);
  EXPECT_EQ(f8_e5m2_to_double(0x7b), 57344.0);
  EXPECT_EQ(f8_e5m2_to_double(0x7c), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(f8_e5m2_to_double(0x7d)));
  EXPECT_EQ(f8_e5m2_to_double(0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(f8_e5m2_to_double(0x3c), 1.0);
  // Every finite f16 round-trips through the float path exactly (compared with a slow reference).
  for (uint32_t h = 0; h < 0x10000; ++h) {
    int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0x1f) continue;
    double want = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
    if (h & 0x8000) want = -want;
    ASSERT_EQ(half_to_double(static_cast<uint16_t>(h)), want) << h;
  }
}

// ----- ZIP -----

std::string le16(uint16_t v) { return std::string{static_cast<char>(v & 0xFF), static_cast<char>(v >> 8)}; }
std::string le32(uint32_t v) { return u64le(v).substr(0, 4); }

// A stored-only zip of `entries`; with `zip64`, sizes and offsets go through the ZIP64 records.
std::string make_zip(const std::vector<std::pair<std::string, std::string>>& entries, bool zip64 = false) {
  std::string out, central;
  for (const auto& [name, data] : entries) {
    uint32_t offset = static_cast<uint32_t>(out.size());
    out += le32(0x04034b50) + le16(20) + le16(0) + le16(0) + le32(0) + le32(0) + le32(static_cast<uint32_t>(data.size())) +
           le32(static_cast<uint32_t>(data.size())) + le16(static_cast<uint16_t>(name.size())) + le16(0) + name + data;
    std::string extra;
    uint32_t size32 = static_cast<uint32_t>(data.size()), off32 = offset;
    if (zip64) {
      extra = le16(1) + le16(24) + u64le(data.size()) + u64le(data.size()) + u64le(offset);
      size32 = off32 = 0xFFFFFFFF;
    }
    central += le32(0x02014b50) + le16(45) + le16(45) + le16(0) + le16(0) + le32(0) + le32(0) + le32(size32) +
               le32(size32) + le16(static_cast<uint16_t>(name.size())) + le16(static_cast<uint16_t>(extra.size())) +
               le16(0) + le16(0) + le16(0) + le32(0) + le32(off32) + name + extra;
  }
  uint64_t cd_offset = out.size();
  out += central;
  if (zip64) {
    uint64_t rec = out.size();
    out += le32(0x06064b50) + u64le(44) + le16(45) + le16(45) + le32(0) + le32(0) + u64le(entries.size()) +
           u64le(entries.size()) + u64le(central.size()) + u64le(cd_offset);
    out += le32(0x07064b50) + le32(0) + u64le(rec) + le32(1);
    out += le32(0x06054b50) + le16(0) + le16(0) + le16(0xFFFF) + le16(0xFFFF) + le32(0xFFFFFFFF) + le32(0xFFFFFFFF) + le16(0);
  } else {
    out += le32(0x06054b50) + le16(0) + le16(0) + le16(static_cast<uint16_t>(entries.size())) +
           le16(static_cast<uint16_t>(entries.size())) + le32(static_cast<uint32_t>(central.size())) +
           le32(static_cast<uint32_t>(cd_offset)) + le16(0);
  }
  return out;
}

TEST(CheckpointZip, DirectoryAndZip64) {
  for (bool zip64 : {false, true}) {
    std::string zip = make_zip({{"a/data.pkl", "PICKLE"}, {"a/data/0", "0123456789"}}, zip64);
    std::vector<rldk::ckpt::ZipEntry> entries;
    std::string error;
    ASSERT_TRUE(rldk::ckpt::parse_zip_directory(zip, entries, error)) << error;
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[1].name, "a/data/0");
    EXPECT_EQ(zip.substr(entries[1].data_offset, entries[1].size), "0123456789");
    // Every truncation is an error, never a read past the end.
    for (size_t cut = 0; cut < zip.size(); ++cut) {
      std::vector<rldk::ckpt::ZipEntry> e;
      std::string err;
      EXPECT_FALSE(rldk::ckpt::parse_zip_directory(std::string_view(zip).substr(0, cut), e, err)) << cut;
    }
  }
}

// ----- pickle -----

std::string bu(const std::string& s) { return "X" + le32(static_cast<uint32_t>(s.size())) + s; }

// torch.save's data.pkl for {"w": FloatStorage tensor of shape [2] at storage "0"}, protocol 2.
std::string state_dict_pickle(const std::string& storage_class = "FloatStorage", uint8_t numel = 2) {
  return std::string("\x80\x02}(") + bu("w") + "ctorch._utils\n_rebuild_tensor_v2\n((" + bu("storage") + "ctorch\n" +
         storage_class + "\n" + bu("0") + bu("cpu") + "K" + std::string(1, static_cast<char>(numel)) + "tQK\x00K"s +
         std::string(1, static_cast<char>(numel)) + "\x85K\x01\x85\x89" + "ccollections\nOrderedDict\n)Rt" + "Ru.";
}

TEST(CheckpointPickle, ReadsTorchStateDict) {
  std::string pkl = state_dict_pickle();
  std::string zip = make_zip({{"m/data.pkl", pkl}, {"m/data/0", floats({1.5f, -2.0f})}});
  std::vector<TensorView> t;
  std::vector<std::shared_ptr<const void>> keep;
  auto st = rldk::ckpt::parse_torch_zip(zip, "m.pt", t, keep);
  ASSERT_TRUE(st.ok()) << st.error().message;
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].name, "w");
  EXPECT_EQ(t[0].dtype, DType::F32);
  double v[2];
  rldk::ckpt::decode_to_double(DType::F32, t[0].data, 2, v);
  EXPECT_EQ(v[0], 1.5);
  EXPECT_EQ(v[1], -2.0);
  // A storage smaller than the view is refused, not read past.
  std::string short_zip = make_zip({{"m/data.pkl", pkl}, {"m/data/0", floats({1.5f})}});
  t.clear();
  st = rldk::ckpt::parse_torch_zip(short_zip, "m.pt", t, keep);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("past its storage"), std::string::npos);
}

TEST(CheckpointPickle, RefusesCodeExecution) {
  struct Case {
    const char* what;
    std::string pickle;
    const char* message;
  };
  std::vector<Case> cases = {
      {"os.system", "\x80\x02" "cos\nsystem\n" + bu("touch /tmp/x") + "\x85R.", "global os.system is not allowed"},
      {"posix.system", "cposix\nsystem\n(" + bu("id") + "tR.", "global posix.system is not allowed"},
      {"builtins.eval", "\x80\x02" "cbuiltins\neval\n" + bu("1") + "\x85R.", "global builtins.eval is not allowed"},
      {"STACK_GLOBAL", "\x80\x04\x8c\x08" "builtins\x94\x8c\x04" "exec\x94\x93.", "global builtins.exec is not allowed"},
      {"REDUCE on a storage class", "\x80\x02" "ctorch\nFloatStorage\n)R.", "REDUCE on torch.FloatStorage is not allowed"},
      {"REDUCE on a non-global", "\x80\x02}))R.", "not an allowed callable"},
      {"INST", "(ios\nsystem\n" + bu("id") + ".", "opcode 0x69 is not allowed"},
      {"NEWOBJ", "\x80\x02" "ccollections\nOrderedDict\n)\x81.", "opcode 0x81 is not allowed"},
      {"BUILD on a list", "\x80\x02]}b.", "BUILD on something other than a tensor or dict"},
      {"memo miss", "\x80\x02h\x05.", "never stored"},
      {"underflow", "\x80\x02R.", "underflow"},
      {"truncated", "\x80\x02X\xff\x00\x00\x00" "ab"s, "runs past the end"},
      {"no STOP", "\x80\x02}", "truncated"},
      {"torch global not allowlisted", "\x80\x02" "ctorch\nload\n.", "global torch.load is not allowed"},
  };
  for (const auto& c : cases) {
    rldk::ckpt::PickleDocument doc;
    std::string error;
    EXPECT_FALSE(rldk::ckpt::load_restricted_pickle(c.pickle, doc, error)) << c.what;
    EXPECT_NE(error.find(c.message), std::string::npos) << c.what << ": " << error;
  }
}

TEST(CheckpointPickle, CyclesAndWrappersAreSafe) {
  // l = []; l.append(l); {"model": l} — a self-referencing list, then a dict that contains itself.
  std::string cyc = "\x80\x02]q\x00h\x00" "a."s;
  rldk::ckpt::PickleDocument doc;
  std::string error;
  ASSERT_TRUE(rldk::ckpt::load_restricted_pickle(cyc, doc, error)) << error;
  std::string self_dict = "\x80\x02}q\x00"s + bu("model") + "h\x00s."s;
  ASSERT_TRUE(rldk::ckpt::load_restricted_pickle(self_dict, doc, error)) << error;
  std::vector<std::pair<std::string, const rldk::ckpt::PickleTensor*>> out;
  rldk::ckpt::collect_state_dict(doc.root, out);
  EXPECT_TRUE(out.empty());
}

TEST(CheckpointSource, LegacyAndUnknownFilesAreNamed) {
  rldk_test::TempDir dir;
  std::string legacy = dir.write("old.pt", std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19rest", 18));
  auto r = rldk::ckpt::read_checkpoint(legacy);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("legacy torch.save"), std::string::npos);
  EXPECT_EQ(r.error().context, legacy);
  dir.write("dcp/.metadata", "x");
  dir.write("dcp/__0_0.distcp", "x");
  r = rldk::ckpt::read_checkpoint(dir.path("dcp"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("torch.distributed.checkpoint"), std::string::npos);
  dir.write("idx/model.safetensors.index.json", R"({"weight_map":{"w":"../evil.safetensors"}})");
  r = rldk::ckpt::read_checkpoint(dir.path("idx"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a file beside the index"), std::string::npos);
  EXPECT_EQ(rldk::ckpt::read_checkpoint(dir.path("missing")).error().code, rldk::ErrorCode::not_found);
}

}  // namespace
