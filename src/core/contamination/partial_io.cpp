// The partial result of scanning one shard of the training corpus, as bytes: what a Ray task returns to the driver.
// It carries no pointers and no thread counts, only counters keyed by the eval index's slot numbers, which every node
// derives identically from the same eval sets and options (checked: the slot and text counts must match).
#include "contamination/binary_io.h"
#include "contamination/scan_state.h"

namespace rldk::contamination {
namespace {

constexpr uint64_t PARTIAL_MAGIC = 0x31544150434B444CULL;  // "LDKCPAT1"

void put_doc(ByteWriter& w, const DocRef& d) {
  w.u32(d.file);
  w.u32(d.field);
  w.u64(d.row);
}
bool get_doc(ByteReader& r, DocRef& d) { return r.u32(d.file) && r.u32(d.field) && r.u64(d.row); }

}  // namespace

std::string serialize_partial(const Partial& p) {
  ByteWriter w;
  w.u64(PARTIAL_MAGIC);
  w.u64(p.infos.size());
  for (const auto& i : p.infos) {
    w.u32(i.docs);
    w.u32(i.char_offset);
    w.u32(i.word_offset);
    put_doc(w, i.first);
  }
  w.u64(p.near.size());
  for (const auto& n : p.near) {
    w.f64(n.jaccard);
    w.f64(n.estimate);
    w.u32(n.count);
    put_doc(w, n.doc);
  }
  w.u64(p.files.size());
  for (const auto& f : p.files) w.str(f);
  w.u64(p.fields.size());
  for (const auto& f : p.fields) w.str(f);
  w.u64(p.documents);
  w.u64(p.bytes);
  // Diagnostics: the kept examples in order, then each kind's full count.
  w.u64(p.diagnostics.examples().size());
  for (const auto& d : p.diagnostics.examples()) {
    w.str(d.kind);
    w.str(d.file);
    w.u64(d.line);
    w.str(d.message);
  }
  w.u64(p.diagnostics.counts().size());
  for (const auto& [kind, count] : p.diagnostics.counts()) {
    w.str(kind);
    w.u64(count);
  }
  return std::move(w.bytes());
}

Result<Partial> deserialize_partial(std::string_view bytes, const EvalIndex& index) {
  auto bad = [](const std::string& why) { return Error{ErrorCode::unrecognized, "partial result: " + why, ""}; };
  ByteReader r(bytes);
  Partial p;
  uint64_t magic = 0, n = 0;
  if (!r.u64(magic) || magic != PARTIAL_MAGIC) return bad("not an rldk contamination partial");
  if (!r.count(n, 28) || n != index.table.size()) return bad("made for other eval sets or options (n-gram count)");
  p.infos.resize(n);
  for (auto& i : p.infos) {
    if (!r.u32(i.docs) || !r.u32(i.char_offset) || !r.u32(i.word_offset) || !get_doc(r, i.first)) return bad("cut");
  }
  if (!r.count(n, 36) || n != index.texts.size()) return bad("made for other eval sets (text count)");
  p.near.resize(n);
  for (auto& x : p.near) {
    if (!r.f64(x.jaccard) || !r.f64(x.estimate) || !r.u32(x.count) || !get_doc(r, x.doc)) return bad("cut");
  }
  for (auto* list : {&p.files, &p.fields}) {
    if (!r.count(n, 8)) return bad("cut");
    list->resize(n);
    for (auto& s : *list) {
      if (!r.str(s)) return bad("cut");
    }
  }
  if (!r.u64(p.documents) || !r.u64(p.bytes) || !r.count(n, 32)) return bad("cut");
  std::map<std::string, uint64_t> kept;
  for (uint64_t k = 0; k < n; ++k) {
    Diagnostic d;
    if (!r.str(d.kind) || !r.str(d.file) || !r.u64(d.line) || !r.str(d.message)) return bad("cut");
    ++kept[d.kind];
    p.diagnostics.add(std::move(d));
  }
  if (!r.count(n, 16)) return bad("cut");
  for (uint64_t k = 0; k < n; ++k) {
    std::string kind;
    uint64_t count = 0;
    if (!r.str(kind) || !r.u64(count)) return bad("cut");
    // Beyond the kept examples a kind's count grows without storing anything (Diagnostics keeps the first few).
    for (uint64_t c = kept[kind]; c < count && c < kept[kind] + (uint64_t{1} << 24); ++c) {
      p.diagnostics.add(Diagnostic{kind, "", 0, ""});
    }
  }
  return p;
}

}  // namespace rldk::contamination
