// The environment variables that change a training run's numerics, data order or parallelism.
#include <cstring>

#include "rldk/env_audit.h"

extern char** environ;  // NOLINT: POSIX declares it nowhere else

namespace rldk {
namespace {

// Exact names. Why each matters is documented in docs/reproducibility.md.
constexpr const char* RELEVANT_NAMES[] = {
    "PYTHONHASHSEED", "CUBLAS_WORKSPACE_CONFIG", "CUDA_LAUNCH_BLOCKING", "CUDA_VISIBLE_DEVICES",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
    "TOKENIZERS_PARALLELISM", "PYTORCH_CUDA_ALLOC_CONF", "TORCH_USE_CUDA_DSA", "TF_DETERMINISTIC_OPS",
    "TF_CUDNN_DETERMINISTIC", "XLA_FLAGS", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "RANK", "LOCAL_RANK",
    "CUDNN_DETERMINISTIC", "CUDNN_BENCHMARK", "FLASH_ATTENTION_DETERMINISTIC", "VLLM_ENABLE_V1_MULTIPROCESSING",
    "RLDK_SEED", "VIRTUAL_ENV", "CONDA_PREFIX",
};
// Prefixes: every NCCL knob can change collective algorithms and therefore reduction order.
constexpr const char* RELEVANT_PREFIXES[] = {"NCCL_", "TORCH_DETERMINISTIC"};

bool is_relevant(const std::string& name) {
  for (const char* n : RELEVANT_NAMES) {
    if (name == n) return true;
  }
  for (const char* p : RELEVANT_PREFIXES) {
    if (name.rfind(p, 0) == 0) return true;
  }
  return false;
}

}  // namespace

std::map<std::string, std::string> relevant_environment(
    const std::optional<std::map<std::string, std::string>>& environment) {
  std::map<std::string, std::string> relevant;
  if (environment) {
    for (const auto& [k, v] : *environment) {
      if (is_relevant(k)) relevant[k] = v;
    }
    return relevant;
  }
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    std::string name(*e, static_cast<size_t>(eq - *e));
    if (is_relevant(name)) relevant[name] = eq + 1;
  }
  return relevant;
}

}  // namespace rldk
