#include "sys/gpu_memory.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

#include "sys/nvml_api.h"

namespace rldk::sys {

struct GpuMemoryReader::Nvml {
  void* handle = nullptr;
  nvml::InitFn init = nullptr;
  nvml::ShutdownFn shutdown = nullptr;
  nvml::DeviceCountFn device_count = nullptr;
  nvml::DeviceByIndexFn device_by_index = nullptr;
  nvml::MemoryInfoFn memory_info = nullptr;
  nvml::ProcessesFn processes = nullptr;
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
  auto lib = std::make_unique<Nvml>();
  lib->handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) {
    const char* error = ::dlerror();
    why_ = "NVML not loaded (" + std::string(error ? error : library) + ")";
    return;
  }
  auto find = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib->handle, name));
    return fn != nullptr;
  };
  if (!find(lib->init, "nvmlInit_v2") || !find(lib->shutdown, "nvmlShutdown") ||
      !find(lib->device_count, "nvmlDeviceGetCount_v2") ||
      !find(lib->device_by_index, "nvmlDeviceGetHandleByIndex_v2") ||
      !find(lib->memory_info, "nvmlDeviceGetMemoryInfo") ||
      !find(lib->processes, "nvmlDeviceGetComputeRunningProcesses")) {
    why_ = library + " lacks an NVML function rldk needs";
    return;
  }
  if (lib->init() != nvml::SUCCESS) {
    why_ = "nvmlInit failed (no NVIDIA driver running?)";
    return;
  }
  lib->initialised = true;
  nvml_ = std::move(lib);
}

GpuMemoryReader::~GpuMemoryReader() = default;

bool GpuMemoryReader::available() const { return nvml_ != nullptr; }

std::optional<GpuMemorySample> GpuMemoryReader::sample(const std::vector<pid_t>& pids) const {
  if (!nvml_) return std::nullopt;
  unsigned int count = 0;
  if (nvml_->device_count(&count) != nvml::SUCCESS || count == 0) return std::nullopt;
  GpuMemorySample sample;
  std::vector<nvml::ProcessInfoV1> processes;
  for (unsigned int i = 0; i < count; ++i) {
    nvml::Device device = nullptr;
    if (nvml_->device_by_index(i, &device) != nvml::SUCCESS) continue;
    ++sample.devices;
    nvml::Memory memory{};
    if (nvml_->memory_info(device, &memory) == nvml::SUCCESS) sample.device_used_bytes += memory.used;
    // Asks for the count first; processes may start between the two calls, so a short buffer is retried.
    for (int attempt = 0; attempt < 3; ++attempt) {
      unsigned int n = static_cast<unsigned int>(processes.size());
      nvml::Return rc = nvml_->processes(device, &n, processes.empty() ? nullptr : processes.data());
      if (rc == nvml::ERROR_INSUFFICIENT_SIZE) {
        processes.resize(n + 8);
        continue;
      }
      if (rc != nvml::SUCCESS) break;
      for (unsigned int k = 0; k < n; ++k) {
        const auto& p = processes[k];
        if (p.usedGpuMemory == nvml::VALUE_NOT_AVAILABLE) continue;
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
