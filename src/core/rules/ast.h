// The parsed form of a rule expression: a flat array of nodes that refer to their children by index. Flat storage
// keeps copies and destruction non-recursive and makes one evaluation walk a single contiguous block.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rules/functions.h"

namespace rldk::rules {

enum class NodeKind : uint8_t {
  number,       // literal; `number`
  string,       // literal; `text`
  boolean,      // literal; `number` is 0 or 1
  null,         // literal `null` / `None`: evaluates to missing
  value,        // the window's values
  step,         // the window's steps
  time,
  name,
  run_id,
  tag,          // tags.KEY; `text` = KEY
  meta,         // meta.KEY; `text` = KEY
  negate,       // -child
  logical_not,  // not child
  logical_and,  // children[0] and children[1]
  logical_or,
  add,
  subtract,
  multiply,
  divide,
  modulo,
  power,        // children[0] ** children[1]
  compare,      // chain: children[0] ops[0] children[1] ops[1] children[2] ...
  list,         // the right-hand side of `in`
  conditional,  // children[0] if children[1] else children[2]
  call,         // `function`(children...)
};

enum class CompareOp : uint8_t { less, less_equal, greater, greater_equal, equal, not_equal, in, not_in };

struct Node {
  NodeKind kind = NodeKind::null;
  Function function = Function::count;  // call
  double number = 0.0;                  // number, boolean
  std::string text;                     // string, tag, meta, and the name of metric("...")
  std::vector<uint32_t> children;
  std::vector<CompareOp> ops;           // compare: one fewer than children
  uint32_t offset = 0;                  // byte offset in the source text, for messages
  uint32_t depth = 1;                   // 1 + the deepest child; bounded so evaluation cannot exhaust the stack
};

struct Program {
  std::vector<Node> nodes;
  uint32_t root = 0;
  bool uses_window_function = false;
  uint8_t scalar_shape = 0;          // rules::ScalarShape, decided once when parsed
  std::vector<std::string> metrics;  // names passed to metric(), sorted and unique
};

}  // namespace rldk::rules
