#include "rldk/diagnostics.h"

#include "rldk/result.h"

namespace rldk {

std::string to_string(const Diagnostic& d) {
  std::string where = d.file;
  if (d.line > 0) where += ":" + std::to_string(d.line);
  return where.empty() ? d.message : where + ": " + d.message;
}

std::string to_string(const Error& error) {
  return error.context.empty() ? error.message : error.context + ": " + error.message;
}

void Diagnostics::add(Diagnostic d) {
  uint64_t& count = counts_[d.kind];
  ++count;
  if (count <= EXAMPLES_PER_KIND) examples_.push_back(std::move(d));
}

void Diagnostics::merge(const Diagnostics& other) {
  // Copy first: merging a collector into itself must not read what it is appending.
  const std::vector<Diagnostic> incoming = other.examples_;
  const std::map<std::string, uint64_t> incoming_counts = other.counts_;
  std::map<std::string, uint64_t> kept;
  for (const auto& d : examples_) ++kept[d.kind];
  for (const auto& d : incoming) {  // in the order they were found
    if (kept[d.kind]++ < EXAMPLES_PER_KIND) examples_.push_back(d);
  }
  for (const auto& [kind, count] : incoming_counts) counts_[kind] += count;
}

uint64_t Diagnostics::total() const {
  uint64_t n = 0;
  for (const auto& [kind, count] : counts_) n += count;
  return n;
}

}  // namespace rldk
