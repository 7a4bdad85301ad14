// Reads each file of a source into its own builder sink, so that every run (or summary) carries the diagnostics of
// the file it came from. Files in a directory that hold no run log are reported on the first item and skipped.
// A folder of many runs (a sweep, a fleet) is read on several threads, one file per task; the items come out in
// file order whatever the thread count, so outputs do not depend on it.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "io/source_files.h"
#include "rldk/reader.h"

namespace rldk::io {

// A builder that takes the read options (RunBuilder: which per-point details to keep) gets them.
template <class Builder>
Builder make_builder(const ReadOptions& options) {
  if constexpr (std::is_constructible_v<Builder, const ReadOptions&>) {
    return Builder(options);
  } else {
    return Builder();
  }
}

// The cores this process may run on (its affinity mask: taskset, a container's cpuset), at least 1.
inline unsigned available_cores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// Called as files finish: how many are done, of how many.
using FileProgress = std::function<void(size_t done, size_t total)>;

// Reads every file of `path` with a Builder and turns each item it builds into `transform(item)` on the reading
// thread, so a run can be analysed and dropped while other files are read. `threads`: 0 for one per core.
template <class Item, class Builder, class Transform>
auto map_each_file(const std::string& path, const ReadOptions& options, unsigned threads, Transform transform,
                   const FileProgress& progress = {})
    -> Result<std::vector<std::invoke_result_t<Transform, Item&&>>> {
  using Out = std::invoke_result_t<Transform, Item&&>;
  auto files = list_source_files(path);
  if (!files.ok()) return files.error();
  const std::vector<std::string>& names = files.value();
  bool directory = names.size() != 1 || names.front() != path;

  struct FileResult {
    std::vector<Out> items;
    std::optional<Error> error;
  };
  std::vector<FileResult> results(names.size());
  auto read_file = [&](size_t i) {
    Builder builder = make_builder<Builder>(options);
    Diagnostics diagnostics;
    Status read = read_source(names[i], options, builder, diagnostics);
    if (!read.ok()) {
      results[i].error = read.error();
      return;
    }
    for (Item& item : builder.take()) {
      item.diagnostics = diagnostics;
      results[i].items.push_back(transform(std::move(item)));
    }
  };
  if (threads == 0) threads = available_cores();
  threads = static_cast<unsigned>(std::min<size_t>(threads, names.size()));
  std::atomic<size_t> next{0}, done{0};
  std::mutex progress_mutex;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < names.size();) {
      read_file(i);
      size_t finished = done.fetch_add(1) + 1;
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        progress(finished, names.size());
      }
    }
  };
  if (threads <= 1 || names.empty() || names.front() == "-") {
    work();
  } else {
    std::vector<std::jthread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  }

  std::vector<Out> out;
  Diagnostics skipped;
  for (size_t i = 0; i < names.size(); ++i) {
    if (results[i].error) {
      if (!directory) return *results[i].error;
      skipped.add(Diagnostic{"skipped_file", names[i], 0, "skipped: " + results[i].error->message});
      continue;
    }
    for (Out& item : results[i].items) out.push_back(std::move(item));
  }
  if (out.empty()) {
    return Error{ErrorCode::unrecognized,
                 "no metrics found in any of the " + std::to_string(names.size()) + " files under this directory",
                 path};
  }
  out.front().diagnostics.merge(skipped);
  return out;
}

// Every item of every file, read on one thread.
template <class Item, class Builder>
Result<std::vector<Item>> read_each_file(const std::string& path, const ReadOptions& options) {
  return map_each_file<Item, Builder>(path, options, 1, [](Item&& item) { return std::move(item); });
}

}  // namespace rldk::io
