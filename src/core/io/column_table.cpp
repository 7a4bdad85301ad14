#include "io/column_table.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "io/lenient_json.h"

namespace rldk::io {
namespace {

// A name read as the table's step column when it has no "step" one: a dict of lists names its step list in the
// plural (history["steps"].append(step)).
constexpr std::string_view PLURAL_STEP = "steps";

struct Column {
  std::string name;
  std::vector<double> values;
  std::vector<bool> present;  // a null cell is a metric not logged at that row
  std::vector<int64_t> labels;  // orient "columns": the row label of each value
  bool numeric = true;

  // Reads the cell at the cursor into the column; false for a list or an object.
  bool add_cell(LenientParser& parser);
};

struct Table {
  std::vector<Column> columns;
  std::vector<int64_t> labels;  // row labels (pandas' index), empty when rows are positions
  // orient "split"
  std::vector<std::string> split_names;
  std::vector<std::vector<std::pair<bool, double>>> split_rows;
  std::vector<int64_t> split_index;
  bool scalar_number = false;  // a number outside any column: the object is a record, not a table
  std::vector<std::pair<size_t, size_t>> nested;  // text ranges of member objects, tables one level down
};

// One cell: a number, a number written as a string, true/false, or null (missing). False for text and containers.
bool cell(LenientParser& parser, bool& present, double& value, bool& text) {
  char c = parser.peek();
  if (c == '{' || c == '[') return false;
  FlatRecord scratch;
  ValueKind kind;
  std::string_view str;
  if (!parser.scalar(scratch, kind, value, str)) return false;
  present = kind != ValueKind::null;
  if (kind == ValueKind::string) {
    present = parse_number(str, value);
    text = text || !present;
  }
  return true;
}

bool Column::add_cell(LenientParser& parser) {
  bool is_present = false, text = false;
  double value = 0;
  if (!cell(parser, is_present, value, text)) return false;
  numeric = numeric && !text;
  values.push_back(value);
  present.push_back(is_present);
  return true;
}

bool integer_label(std::string_view key, int64_t& label) {
  auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), label);
  return ec == std::errc() && end == key.data() + key.size();
}

// A list of cells at the cursor. False (cursor unspecified) when an element is a list or an object.
bool list_column(LenientParser& parser, Column& column) {
  parser.consume('[');
  if (parser.consume(']')) return true;
  for (;;) {
    if (!column.add_cell(parser)) return false;
    if (parser.consume(',')) continue;
    return parser.consume(']');
  }
}

// An object of cells keyed by integer row labels (pandas' orient "columns"). False for any other object.
bool labelled_column(LenientParser& parser, Column& column) {
  parser.consume('{');
  if (parser.consume('}')) return false;
  std::string key;
  for (;;) {
    int64_t label = 0;
    if (!parser.string(key) || !integer_label(key, label) || !parser.consume(':')) return false;
    if (!column.add_cell(parser)) return false;
    column.labels.push_back(label);
    if (parser.consume(',')) continue;
    return parser.consume('}');
  }
}

// pandas' orient "split": "data" is a list of rows, each a list of cells.
bool split_rows(LenientParser& parser, Table& table) {
  parser.consume('[');
  if (parser.consume(']')) return true;
  for (;;) {
    if (parser.peek() != '[') return false;
    parser.consume('[');
    auto& row = table.split_rows.emplace_back();
    if (!parser.consume(']')) {
      for (;;) {
        bool present = false, text = false;
        double value = 0;
        if (!cell(parser, present, value, text)) return false;
        row.emplace_back(present && !text, value);
        if (parser.consume(',')) continue;
        if (!parser.consume(']')) return false;
        break;
      }
    }
    if (parser.consume(',')) continue;
    return parser.consume(']');
  }
}

bool string_list(LenientParser& parser, std::vector<std::string>& out) {
  parser.consume('[');
  if (parser.consume(']')) return true;
  std::string s;
  for (;;) {
    if (!parser.string(s)) return false;
    out.push_back(s);
    if (parser.consume(',')) continue;
    return parser.consume(']');
  }
}

bool integer_list(LenientParser& parser, std::vector<int64_t>& out) {
  Column column;
  if (!list_column(parser, column)) return false;
  for (size_t i = 0; i < column.values.size(); ++i) {
    int64_t step = 0;
    if (!column.present[i] || !step_from_number(column.values[i], step)) return false;
    out.push_back(step);
  }
  return true;
}

// The members of the object at the cursor. False when the text is no object or breaks.
bool read_members(std::string_view text, Table& table) {
  LenientParser parser(text);
  if (!parser.consume('{')) return false;
  if (parser.consume('}')) return true;
  std::string key;
  for (;;) {
    if (!parser.string(key) || !parser.consume(':')) return false;
    char c = parser.peek();
    size_t begin = parser.offset();
    LenientParser look = parser;
    bool taken = false;
    if (key == "columns" && c == '[') {
      taken = string_list(look, table.split_names);
    } else if (key == "data" && c == '[') {
      taken = split_rows(look, table);
    } else if (key == "index" && c == '[') {
      taken = integer_list(look, table.split_index);
    }
    if (!taken && (c == '[' || c == '{')) {
      Column column;
      column.name = key;
      look = parser;
      taken = c == '[' ? list_column(look, column) : labelled_column(look, column);
      if (taken && column.numeric && !column.values.empty()) table.columns.push_back(std::move(column));
    }
    if (taken) {
      parser = look;
    } else {
      if (!parser.skip_value()) return false;
      if (c == '{') table.nested.emplace_back(begin, parser.offset());
      if (c != '{' && c != '[' && c != '"' && c != '\'' && c != 'n') table.scalar_number = true;  // not null/text
    }
    if (parser.consume(',')) continue;
    return parser.consume('}');
  }
}

// The split layout's rows as columns.
bool columns_from_split(Table& table) {
  if (table.split_names.empty() || table.split_rows.empty()) return false;
  table.columns.clear();
  for (const auto& name : table.split_names) table.columns.push_back(Column{name, {}, {}, {}, true});
  for (const auto& row : table.split_rows) {
    if (row.size() != table.split_names.size()) return false;
    for (size_t c = 0; c < row.size(); ++c) {
      table.columns[c].values.push_back(row[c].second);
      table.columns[c].present.push_back(row[c].first);
    }
  }
  if (table.split_index.size() == table.split_rows.size()) table.labels = table.split_index;
  return true;
}

bool is_step_column(const Column& column) { return column.name == "step" || column.name == PLURAL_STEP; }

}  // namespace

bool read_column_table(std::string_view text, RecordInterpreter& records, ReadContext& context, uint64_t line) {
  Table table;
  if (!read_members(text, table) || table.scalar_number) return false;
  bool split = columns_from_split(table);
  if (!split && table.columns.empty()) {
    // One level down: the member object with the most columns ({"config": {...}, "history": {"loss": [...]}}).
    Table best;
    for (auto [begin, end] : table.nested) {
      Table inner;
      if (read_members(text.substr(begin, end - begin), inner) && !inner.scalar_number &&
          inner.columns.size() > best.columns.size()) {
        best = std::move(inner);
      }
    }
    table = std::move(best);
  }
  // Label-keyed columns (orient "columns") share one index; lists share a length.
  bool labelled = !table.columns.empty() && !table.columns.front().labels.empty();
  for (const auto& c : table.columns) {
    if (c.labels.empty() == labelled) return false;  // lists mixed with label-keyed objects: no table layout
  }
  if (labelled) table.labels = table.columns.front().labels;
  // The table's length: that of its step column, else the length most columns share (the longer on a tie).
  std::map<size_t, size_t> lengths;
  size_t rows = 0;
  for (const auto& c : table.columns) {
    ++lengths[c.values.size()];
    if (is_step_column(c)) rows = c.values.size();
  }
  if (rows == 0) {
    size_t most = 0;
    for (auto [length, count] : lengths) {
      if (count >= most) std::tie(rows, most) = std::pair{length, count};
    }
  }
  size_t metrics = 0;
  for (const auto& c : table.columns) metrics += c.values.size() == rows && !is_step_column(c) ? 1 : 0;
  if (rows < 2 || metrics == 0) return false;
  std::erase_if(table.columns, [&](const Column& c) {
    if (c.values.size() == rows && (!labelled || c.labels == table.labels)) return false;
    context.diagnose("column_length", line,
                     "column '" + c.name.substr(0, 60) + "' has " + std::to_string(c.values.size()) +
                         " values where the table has " + std::to_string(rows) + " rows: not read");
    return true;
  });
  auto named_step = [](const Column& c) { return c.name == "step"; };
  bool has_step = std::any_of(table.columns.begin(), table.columns.end(), named_step);
  FlatRecord record;
  for (size_t row = 0; row < rows; ++row) {
    record.clear();
    for (const auto& c : table.columns) {
      if (!c.present[row]) continue;
      append_number(record, !has_step && c.name == PLURAL_STEP ? std::string_view("step") : std::string_view(c.name),
                    c.values[row]);
    }
    int64_t position = table.labels.size() == rows ? table.labels[row] : static_cast<int64_t>(row);
    records.wide(record, line, position);
  }
  return true;
}

}  // namespace rldk::io
