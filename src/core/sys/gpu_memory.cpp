#include "sys/gpu_memory.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

namespace rldk::sys {
namespace {

// The few NVML declarations used, written here because the NVML header ships with the CUDA toolkit, which the build
// does not need. Only symbols whose ABI NVML keeps stable are used: the unversioned
// nvmlDeviceGetComputeRunningProcesses is the first version of that call, with the two-field process record below
// (later versions have new symbol names, _v2 and _v3, with longer records).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ULLONG_MAX;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};

}  // namespace

struct GpuMemoryReader::Nvml {
  void* handle = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*device_count)(unsigned int*) = nullptr;
  nvmlReturn_t (*device_by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*memory_info)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v1_t*) = nullptr;
  bool initialised = false;

  ~Nvml() {
    if (initialised && shutdown) shutdown();
    if (handle) ::dlclose(handle);
  }
};

GpuMemoryReader::GpuMemoryReader(std::string library) {
  if (library.empty()) {
    const char* env = std::getenv("RLDK_NVML_LIBRARY");
    library = env && *env ? env : "libnvidia-ml.so.1";
  }
  auto nvml = std::make_unique<Nvml>();
  nvml->handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!nvml->handle) {
    const char* error = ::dlerror();
    why_ = "NVML not loaded (" + std::string(error ? error : library) + ")";
    return;
  }
  auto find = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(nvml->handle, name));
    return fn != nullptr;
  };
  if (!find(nvml->init, "nvmlInit_v2") || !find(nvml->shutdown, "nvmlShutdown") ||
      !find(nvml->device_count, "nvmlDeviceGetCount_v2") ||
      !find(nvml->device_by_index, "nvmlDeviceGetHandleByIndex_v2") ||
      !find(nvml->memory_info, "nvmlDeviceGetMemoryInfo") ||
      !find(nvml->processes, "nvmlDeviceGetComputeRunningProcesses")) {
    why_ = library + " lacks an NVML function rldk needs";
    return;
  }
  if (nvml->init() != NVML_SUCCESS) {
    why_ = "nvmlInit failed (no NVIDIA driver running?)";
    return;
  }
  nvml->initialised = true;
  nvml_ = std::move(nvml);
}

GpuMemoryReader::~GpuMemoryReader() = default;

bool GpuMemoryReader::available() const { return nvml_ != nullptr; }

std::optional<GpuMemorySample> GpuMemoryReader::sample(const std::vector<pid_t>& pids) const {
  if (!nvml_) return std::nullopt;
  unsigned int count = 0;
  if (nvml_->device_count(&count) != NVML_SUCCESS || count == 0) return std::nullopt;
  GpuMemorySample sample;
  std::vector<nvmlProcessInfo_v1_t> processes;
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (nvml_->device_by_index(i, &device) != NVML_SUCCESS) continue;
    ++sample.devices;
    nvmlMemory_t memory{};
    if (nvml_->memory_info(device, &memory) == NVML_SUCCESS) sample.device_used_bytes += memory.used;
    // Asks for the count first; processes may start between the two calls, so a short buffer is retried.
    for (int attempt = 0; attempt < 3; ++attempt) {
      unsigned int n = static_cast<unsigned int>(processes.size());
      nvmlReturn_t rc = nvml_->processes(device, &n, processes.empty() ? nullptr : processes.data());
      if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
        processes.resize(n + 8);
        continue;
      }
      if (rc != NVML_SUCCESS) break;
      for (unsigned int k = 0; k < n; ++k) {
        const auto& p = processes[k];
        if (p.usedGpuMemory == NVML_VALUE_NOT_AVAILABLE) continue;
        if (std::find(pids.begin(), pids.end(), static_cast<pid_t>(p.pid)) != pids.end()) {
          sample.process_bytes += p.usedGpuMemory;
        }
      }
      break;
    }
  }
  if (sample.devices == 0) return std::nullopt;
  return sample;
}

}  // namespace rldk::sys
