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
  for (const auto& [kind, count] : other.counts_) {
    uint64_t kept = 0;
    for (const auto& d : examples_) kept += d.kind == kind;
    for (const auto& d : other.examples_) {
      if (d.kind == kind && kept < EXAMPLES_PER_KIND) {
        examples_.push_back(d);
        ++kept;
      }
    }
    counts_[kind] += count;
  }
}

uint64_t Diagnostics::total() const {
  uint64_t n = 0;
  for (const auto& [kind, count] : counts_) n += count;
  return n;
}

}  // namespace rldk
