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

// Reads one entry of list_source_files (a file, "-", an MLflow run folder, a TensorBoard log dir) into `sink`. Unlike
// read_source, a folder entry is not listed again: a log dir holds runs of its own (an eval writer's subfolder) that
// are entries of their own.
Status read_entry(const std::string& entry, const ReadOptions& options, PointSink& sink, Diagnostics& diagnostics);

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

// Calls `read_file(file)` -> Result<std::vector<Out>> for every file of `path` (a file, a folder, "-"), on `threads`
// threads (0: one per core), one file per task; the items come out in file order. In a folder, a file that cannot be
// read is skipped and said so on the first item (Out has `diagnostics`); a single file's error is the result.
template <class Out, class ReadFile>
Result<std::vector<Out>> map_each_path(const std::string& path, unsigned threads, ReadFile read_file,
                                       const FileProgress& progress = {}) {
  auto files = list_source_files(path);
  if (!files.ok()) return files.error();
  const std::vector<std::string>& names = files.value();
  bool directory = names.size() != 1 || names.front() != path;

  std::vector<std::optional<Result<std::vector<Out>>>> results(names.size());
  if (threads == 0) threads = available_cores();
  threads = static_cast<unsigned>(std::min<size_t>(threads, names.size()));
  std::atomic<size_t> next{0}, done{0};
  std::mutex progress_mutex;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < names.size();) {
      results[i].emplace(read_file(names[i]));
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
    Result<std::vector<Out>>& result = *results[i];
    if (!result.ok()) {
      if (!directory) return result.error();
      skipped.add(Diagnostic{"skipped_file", names[i], 0, "skipped: " + result.error().message});
      continue;
    }
    for (Out& item : result.value()) out.push_back(std::move(item));
  }
  if (out.empty()) {
    return Error{ErrorCode::unrecognized,
                 "no metrics found in any of the " + std::to_string(names.size()) + " files under this directory",
                 path};
  }
  out.front().diagnostics.merge(skipped);
  return out;
}

// Reads every file of `path` with a Builder and turns each item it builds into `transform(item)` on the reading
// thread, so a run can be analysed and dropped while other files are read. `threads`: 0 for one per core.
template <class Item, class Builder, class Transform>
auto map_each_file(const std::string& path, const ReadOptions& options, unsigned threads, Transform transform,
                   const FileProgress& progress = {})
    -> Result<std::vector<std::invoke_result_t<Transform, Item&&>>> {
  using Out = std::invoke_result_t<Transform, Item&&>;
  auto read_file = [&](const std::string& file) -> Result<std::vector<Out>> {
    Builder builder = make_builder<Builder>(options);
    Diagnostics diagnostics;
    Status read = read_entry(file, options, builder, diagnostics);
    if (!read.ok()) return read.error();
    std::vector<Out> items;
    for (Item& item : builder.take()) {
      item.diagnostics = diagnostics;
      items.push_back(transform(std::move(item)));
    }
    return items;
  };
  return map_each_path<Out>(path, threads, read_file, progress);
}

// Every item of every file, read on one thread.
template <class Item, class Builder>
Result<std::vector<Item>> read_each_file(const std::string& path, const ReadOptions& options) {
  return map_each_file<Item, Builder>(path, options, 1, [](Item&& item) { return std::move(item); });
}

}  // namespace rldk::io
