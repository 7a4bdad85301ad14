// A restricted pickle reader for torch.save's data.pkl: a small stack machine over the fixed set of opcodes that
// pickle protocols 2-4 use for plain data, which builds values and never executes code. GLOBAL is accepted only for
// an allowlist (torch's tensor rebuild functions, storage classes, dtypes, collections.OrderedDict) — anything else,
// os.system or builtins.eval included, stops the reader at that opcode, before any call could happen. REDUCE is
// interpreted only for allowlisted callables, by code here that builds a value; it never calls into Python.
// The same idea as torch.load(weights_only=True).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rldk/checkpoint.h"

namespace rldk::ckpt {

// Values live in the document's arena and refer to each other by plain pointers: a pickle can build cycles (a list
// appended to itself), which reference counting would leak.
struct PickleValue;

// A storage reference from torch's persistent id ('storage', StorageClass, key, location, numel).
struct PickleStorage {
  DType dtype = DType::U8;     // from the storage class; U8 for UntypedStorage (numel counts bytes)
  bool untyped = false;
  std::string key;             // the archive entry data/<key>
  uint64_t numel = 0;
};

struct PickleTensor {
  const PickleStorage* storage = nullptr;
  DType dtype = DType::F32;
  uint64_t offset = 0;         // in elements of dtype
  std::vector<uint64_t> shape;
  std::vector<int64_t> stride;
};

struct PickleValue {
  enum class Kind : uint8_t { none, boolean, integer, floating, string, bytes, tuple, list, dict, global, storage,
                              tensor } kind = Kind::none;
  bool boolean = false;
  int64_t integer = 0;
  double floating = 0;
  std::string text;  // string, bytes, or "module.name" for a global
  std::vector<const PickleValue*> items;                                  // tuple, list
  std::vector<std::pair<const PickleValue*, const PickleValue*>> entries;  // dict, in insertion order
  PickleStorage storage;
  PickleTensor tensor;
};

struct PickleDocument {
  std::vector<std::unique_ptr<PickleValue>> arena;
  const PickleValue* root = nullptr;
};

// Limit on values built, so a hostile data.pkl cannot exhaust memory (real state dicts need ~15 per tensor).
inline constexpr size_t PICKLE_MAX_VALUES = 8'000'000;

// Runs `data` to its STOP opcode. On a refused global or opcode, malformed data or a limit, returns false with
// `error` set (e.g. "global os.system is not allowed (only tensor data may be loaded)").
bool load_restricted_pickle(std::string_view data, PickleDocument& doc, std::string& error);

// The tensors of a loaded state dict: the dict itself, or the one under "state_dict", "model", "module",
// "model_state_dict" when present; nested dicts are flattened with '.'. Non-tensor values are skipped.
void collect_state_dict(const PickleValue* root, std::vector<std::pair<std::string, const PickleTensor*>>& out);

}  // namespace rldk::ckpt
