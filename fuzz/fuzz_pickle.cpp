// Arbitrary bytes run through the restricted pickle reader, then its state-dict walk: no crash, no unbounded memory,
// and never a call of anything (the reader has no way to call out; this checks it also never crashes trying).
// Seeds: data.pkl of torch.save files and hostile pickles (fuzz/corpus/pickle).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checkpoint/restricted_pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  rldk::ckpt::PickleDocument doc;
  std::string error;
  if (!rldk::ckpt::load_restricted_pickle(bytes, doc, error)) return 0;
  std::vector<std::pair<std::string, const rldk::ckpt::PickleTensor*>> tensors;
  rldk::ckpt::collect_state_dict(doc.root, tensors);
  for (const auto& [name, t] : tensors) {
    if (t->storage == nullptr || t->shape.size() != t->stride.size()) __builtin_trap();
  }
  return 0;
}
