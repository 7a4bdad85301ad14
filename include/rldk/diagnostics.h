// Problems found in the data itself (a malformed line, a value that is not a number). They are not errors: the
// reader records where they are and carries on. Counts are exact; only the first few examples per kind are kept,
// so memory stays bounded on a file with millions of bad lines.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rldk {

struct Diagnostic {
  std::string kind;     // stable identifier, e.g. "malformed_json", "bad_step"
  std::string file;
  uint64_t line = 0;    // 1-based; 0 when the problem is not tied to a line
  std::string message;  // for a person
};

std::string to_string(const Diagnostic& d);  // "file:line: message"

class Diagnostics {
 public:
  static constexpr size_t EXAMPLES_PER_KIND = 5;

  void add(Diagnostic d);
  void merge(const Diagnostics& other);
  uint64_t total() const;
  bool empty() const { return total() == 0; }
  // Count per kind, and the first examples of each kind in the order they were found.
  const std::map<std::string, uint64_t>& counts() const { return counts_; }
  const std::vector<Diagnostic>& examples() const { return examples_; }

 private:
  std::map<std::string, uint64_t> counts_;
  std::vector<Diagnostic> examples_;
};

}  // namespace rldk
