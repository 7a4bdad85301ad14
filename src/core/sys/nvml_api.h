// The few NVML declarations rldk uses, written here because the NVML header ships with the CUDA toolkit, which the
// build does not need. Only calls whose ABI NVML keeps stable are used: the unversioned
// nvmlDeviceGetComputeRunningProcesses is the first version of that call, with the two-field process record below
// (later versions have new symbol names, _v2 and _v3, with longer records). The stand-in library of the tests
// (tests/unit/fake_nvml.cpp) defines its functions with these same types.
#pragma once

#include <climits>

namespace rldk::sys::nvml {

using Return = int;
using Device = void*;
constexpr Return SUCCESS = 0;
constexpr Return ERROR_INSUFFICIENT_SIZE = 7;
constexpr unsigned long long VALUE_NOT_AVAILABLE = ULLONG_MAX;

struct Memory {
  unsigned long long total, free, used;
};
struct ProcessInfoV1 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};

using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using DeviceCountFn = Return (*)(unsigned int*);
using DeviceByIndexFn = Return (*)(unsigned int, Device*);
using MemoryInfoFn = Return (*)(Device, Memory*);
using ProcessesFn = Return (*)(Device, unsigned int*, ProcessInfoV1*);

}  // namespace rldk::sys::nvml
