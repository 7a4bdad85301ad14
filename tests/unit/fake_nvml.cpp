// A stand-in for libnvidia-ml.so.1 with the NVML calls rldk makes, for testing GpuMemoryReader where there is no
// GPU: two devices, the calling process holding memory on both (one reading "not available"), and another process.
#include <unistd.h>

#include <climits>
#include <cstring>

#include "sys/nvml_api.h"

using rldk::sys::nvml::Memory;
using FakeProcess = rldk::sys::nvml::ProcessInfoV1;

extern "C" {

static int initialised = 0;

int nvmlInit_v2() { initialised = 1; return 0; }
int nvmlShutdown() { initialised = 0; return 0; }
int nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!initialised) return 1;  // NVML_ERROR_UNINITIALIZED
  *count = 2;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, rldk::sys::nvml::Device* device) {
  if (index >= 2) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = reinterpret_cast<void*>(static_cast<unsigned long>(index + 1));
  return 0;
}
int nvmlDeviceGetMemoryInfo(rldk::sys::nvml::Device device, Memory* memory) {
  unsigned long long gib = 1ULL << 30;
  memory->total = 16 * gib;
  memory->used = reinterpret_cast<unsigned long>(device) * gib;  // 1 GiB on the first, 2 GiB on the second
  memory->free = memory->total - memory->used;
  return 0;
}
// The first device: this process with 300 MiB, another with 100 MiB; the second: this process, value not available.
int nvmlDeviceGetComputeRunningProcesses(rldk::sys::nvml::Device device, unsigned int* count, FakeProcess* infos) {
  FakeProcess first[] = {{static_cast<unsigned int>(getpid()), 300ULL << 20}, {999999u, 100ULL << 20}};
  FakeProcess second[] = {{static_cast<unsigned int>(getpid()), ULLONG_MAX}};
  bool is_first = reinterpret_cast<unsigned long>(device) == 1;
  unsigned int n = is_first ? 2 : 1;
  if (*count < n) {
    *count = n;
    return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  }
  *count = n;
  std::memcpy(infos, is_first ? first : second, n * sizeof(FakeProcess));
  return 0;
}

}
