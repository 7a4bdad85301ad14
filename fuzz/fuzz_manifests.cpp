// Lineage and run manifests are files people edit and copy between machines: the input is split at the first NUL
// into two documents, each read as a lineage manifest and as a run manifest, and the two run manifests compared and
// rendered (text, Markdown, JSON).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "provenance/lineage_manifest.h"
#include "provenance/run_manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rldk::provenance;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t cut = text.find('\0');
  std::string_view first = text.substr(0, cut);
  std::string_view second = cut == std::string_view::npos ? first : text.substr(cut + 1);
  JsonDocument a, b;
  bool ok_a = parse_json_document(first, "a", a).ok();
  bool ok_b = parse_json_document(second, "b", b).ok();
  if (ok_a) (void)lineage_from_document(a, "a");
  if (ok_a && ok_b) {
    ManifestDiff diff{"a", "b", compare_run_manifests(a, b)};
    (void)manifest_diff_text(diff);
    (void)manifest_diff_markdown(diff);
    (void)manifest_diff_json(diff).dump();
  }
  return 0;
}
