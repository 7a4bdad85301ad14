// An MLflow tracking server's answers (io/mlflow_server.h): runs/get and a page of metrics/get-history are untrusted
// input. Whatever they hold, reading them must not crash, hang or read out of bounds.
#include <string>
#include <string_view>
#include <vector>

#include "io/mlflow_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string status, next;
  std::vector<rldk::io::MlflowMetricValue> values;
  if (rldk::io::parse_mlflow_run(text, status, values).ok()) {
    for (const auto& v : values) {
      if (v.key.size() > size) __builtin_trap();  // a key comes from the answer
    }
  }
  if (rldk::io::parse_mlflow_history_page(text, values, next).ok() && next.size() > size) __builtin_trap();
  return 0;
}
