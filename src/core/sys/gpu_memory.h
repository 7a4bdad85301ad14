// GPU memory of a launched trainer, read through NVML (the NVIDIA driver's management library) when the machine has
// one. NVML is opened at run time with dlopen: rldk builds and runs where there is no NVIDIA driver, and then simply
// has no GPU readings. `rldk monitor --cmd` adds the readings to its sys/* metrics.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rldk::sys {

struct GpuMemorySample {
  // Memory the given processes hold, summed over every GPU. 0 when NVML cannot see them: inside a container, NVML
  // reports the host's process ids, which match none of the container's.
  uint64_t process_bytes = 0;
  uint64_t device_used_bytes = 0;  // memory in use on all GPUs, by any process
  uint32_t devices = 0;
};

class GpuMemoryReader {
 public:
  // Opens `library` (default: RLDK_NVML_LIBRARY if set, else libnvidia-ml.so.1) and initialises NVML. A reader
  // that could not (no driver, no GPU) answers nullopt; why() says what failed.
  explicit GpuMemoryReader(std::string library = {});
  ~GpuMemoryReader();
  GpuMemoryReader(const GpuMemoryReader&) = delete;
  GpuMemoryReader& operator=(const GpuMemoryReader&) = delete;

  bool available() const;
  const std::string& why() const { return why_; }
  std::optional<GpuMemorySample> sample(const std::vector<pid_t>& pids) const;

 private:
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
  std::string why_;
};

}  // namespace rldk::sys
