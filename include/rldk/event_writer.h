// EventWriter: appends canonical long-form events to a JSONL file, one line per event, flushed as it is written so
// a monitor tailing the file sees it at once. Safe to share between threads: each line is written whole with one
// write(2) under a lock (and O_APPEND keeps lines whole between processes too).
//
// Line format (keys sorted; run_id, tags and meta omitted when empty; NaN/Infinity written as Python's json does):
//   {"name":"policy/kl","run_id":"r1","step":12,"time":"2026-01-01T00:00:00.000Z","value":0.123}
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rldk/event.h"
#include "rldk/result.h"

namespace rldk {

class EventWriter {
 public:
  // Opens (creating parent folders) for appending, or truncating when `append` is false.
  static Result<std::unique_ptr<EventWriter>> open(const std::string& path, std::string run_id = "",
                                                   bool append = true);
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  // Events without a wall time are stamped with the current time; without a run id they get the writer's.
  Status log(const Event& event);
  Status log(int64_t step, std::string_view name, double value);
  // One event per metric, all at `step` and with the same time.
  Status log_metrics(int64_t step, const std::vector<std::pair<std::string, double>>& metrics);
  Status close();
  const std::string& path() const { return path_; }

  // The JSONL line for an event (without the newline); exposed for tests and for other writers.
  static std::string format_line(const Event& event);

 private:
  EventWriter(int fd, std::string path, std::string run_id);
  Status write_all(const std::string& text);

  std::mutex mutex_;
  int fd_;
  std::string path_;
  std::string run_id_;
};

}  // namespace rldk
