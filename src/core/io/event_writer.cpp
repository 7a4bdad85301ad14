#include "rldk/event_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "io/time_parse.h"
#include "model/json_text.h"
#include "sys/write_all.h"

namespace rldk {
namespace {

double now_seconds() {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

void append_string_map(std::string& out, const std::map<std::string, std::string>& m) {
  out.push_back('{');
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, k);
    out.push_back(':');
    append_json_string(out, v);
  }
  out.push_back('}');
}

}  // namespace

EventWriter::EventWriter(int fd, std::string path, std::string run_id)
    : fd_(fd), path_(std::move(path)), run_id_(std::move(run_id)) {}

EventWriter::~EventWriter() { close(); }

Result<std::unique_ptr<EventWriter>> EventWriter::open(const std::string& path, std::string run_id, bool append) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return Error{ErrorCode::io, std::string("cannot open for writing: ") + std::strerror(errno), path};
  return std::unique_ptr<EventWriter>(new EventWriter(fd, path, std::move(run_id)));
}

std::string EventWriter::format_line(const Event& e) {
  std::string line = "{";
  if (!e.meta.empty()) {
    line += "\"meta\":";
    append_string_map(line, e.meta);
    line += ",";
  }
  line += "\"name\":";
  append_json_string(line, e.name);
  if (!e.run_id.empty()) {
    line += ",\"run_id\":";
    append_json_string(line, e.run_id);
  }
  line += ",\"step\":" + std::to_string(e.step);
  if (!e.tags.empty()) {
    line += ",\"tags\":";
    append_string_map(line, e.tags);
  }
  if (std::isfinite(e.wall_time)) line += ",\"time\":" + io::json_time_value(e.wall_time);
  line += ",\"value\":";
  append_double(line, e.value);
  line += "}";
  return line;
}

Status EventWriter::write_all(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return Error{ErrorCode::io, "writer is closed", path_};
  if (int err = sys::write_all(fd_, text)) {
    return Error{ErrorCode::io, std::string("write failed: ") + std::strerror(err), path_};
  }
  return Ok{};
}

Status EventWriter::log(const Event& event) {
  if (event.name.empty()) return Error{ErrorCode::invalid_argument, "event name is empty", path_};
  Event e = event;
  if (!std::isfinite(e.wall_time)) e.wall_time = now_seconds();
  if (e.run_id.empty()) e.run_id = run_id_;
  return write_all(format_line(e) + "\n");
}

Status EventWriter::log(int64_t step, std::string_view name, double value) {
  Event e;
  e.step = step;
  e.name = std::string(name);
  e.value = value;
  return log(e);
}

Status EventWriter::log_metrics(int64_t step, const std::vector<std::pair<std::string, double>>& metrics) {
  Event e;
  e.step = step;
  e.wall_time = now_seconds();
  e.run_id = run_id_;
  std::string text;
  for (const auto& [name, value] : metrics) {
    if (name.empty()) return Error{ErrorCode::invalid_argument, "metric name is empty", path_};
    e.name = name;
    e.value = value;
    text += format_line(e);
    text.push_back('\n');
  }
  return write_all(text);  // one write: a reader never sees half of a step's metrics
}

Status EventWriter::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ >= 0 && ::close(fd_) != 0) {
    fd_ = -1;
    return Error{ErrorCode::io, std::string("close failed: ") + std::strerror(errno), path_};
  }
  fd_ = -1;
  return Ok{};
}

}  // namespace rldk
