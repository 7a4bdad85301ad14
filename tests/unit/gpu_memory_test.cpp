#include <gtest/gtest.h>
#include <unistd.h>

#include "sys/gpu_memory.h"

namespace rldk::sys {
namespace {

TEST(GpuMemory, ReadsProcessAndDeviceMemoryThroughNvml) {
  GpuMemoryReader reader(RLDK_FAKE_NVML);
  ASSERT_TRUE(reader.available()) << reader.why();
  auto sample = reader.sample({getpid(), 12345});
  ASSERT_TRUE(sample.has_value());
  EXPECT_EQ(sample->devices, 2u);
  EXPECT_EQ(sample->device_used_bytes, 3ULL << 30);
  // Only this process's memory counts, and a reading NVML marks "not available" is left out.
  EXPECT_EQ(sample->process_bytes, 300ULL << 20);
  auto other = reader.sample({12345});
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->process_bytes, 0u);
}

TEST(GpuMemory, WithoutNvmlThereAreNoReadings) {
  GpuMemoryReader reader("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(reader.available());
  EXPECT_NE(reader.why().find("NVML not loaded"), std::string::npos);
  EXPECT_FALSE(reader.sample({getpid()}).has_value());
}

}  // namespace
}  // namespace rldk::sys
