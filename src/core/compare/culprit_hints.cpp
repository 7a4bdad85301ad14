// Culprit hints for a failed determinism check: patterns in what the replicas printed, and the shape of the
// divergence (from the first logged step: an unseeded random source; later: accumulated floating-point order).
#include <algorithm>
#include <regex>
#include <set>

#include "rldk/determinism.h"

namespace rldk {
namespace {

struct Pattern {
  const char* id;
  const char* regex;  // ECMAScript, case-insensitive, matched per line
  const char* message;
  const char* fix;
};

// Messages PyTorch, cuBLAS and common libraries print when something is nondeterministic or not set up for it.
const Pattern PATTERNS[] = {
    {"cublas_workspace", R"(CUBLAS_WORKSPACE_CONFIG)",
     "cuBLAS was asked for determinism without a fixed workspace configuration.",
     "export CUBLAS_WORKSPACE_CONFIG=:4096:8 before CUDA initialises (rldk sets it for replicas; a launcher may "
     "override it)."},
    {"nondeterministic_op", R"(does not have a deterministic implementation|nondeterministic|non-deterministic)",
     "An operation without a deterministic implementation ran (scatter_add, index_add, some pooling and "
     "interpolation backward passes on CUDA).",
     "torch.use_deterministic_algorithms(True) to find it (it raises at the op), then replace the op or accept "
     "a tolerance (--rtol/--atol)."},
    {"cudnn_benchmark", R"(cudnn\.benchmark|cudnn_benchmark)",
     "cuDNN autotuning can pick different convolution algorithms per run.",
     "torch.backends.cudnn.benchmark = False and torch.backends.cudnn.deterministic = True."},
    {"dataloader_workers", R"(DataLoader.*num_workers|worker_init_fn|dataloader worker)",
     "DataLoader workers draw from their own random state.",
     "Pass generator=torch.Generator().manual_seed(seed) and a worker_init_fn that seeds numpy and random from "
     "torch.initial_seed()."},
    {"tf32", R"(allow_tf32|TF32|set_float32_matmul_precision)",
     "TF32 matmuls change rounding; results depend on the kernel chosen.",
     "torch.backends.cuda.matmul.allow_tf32 = False (and cudnn.allow_tf32) when comparing bitwise."},
    {"random_seed_printed", R"((global )?seed (set )?(to|=|:) ?[0-9]+)",
     "The replicas printed their seeds; compare them (evidence below): different seeds make different runs.",
     "Pass the same --seed to every replica, or take it from PYTHONHASHSEED / RLDK_REPLICA_INDEX on purpose."},
    {"nccl", R"(NCCL_ALGO|NCCL_PROTO|nccl)",
     "Collective communication order (NCCL ring/tree, world size) changes reduction order.",
     "Fix NCCL_ALGO/NCCL_PROTO and the world size, or compare within a tolerance."},
};

constexpr size_t EVIDENCE_PER_HINT = 4;
constexpr size_t LINE_EXCERPT = 200;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, std::min(end - start, LINE_EXCERPT)));
    start = end + 1;
  }
  return out;
}

}  // namespace

std::vector<CulpritHint> culprit_hints(const std::vector<ReplicaOutcome>& outcomes,
                                       const ReplicaComparison& comparison, int64_t first_logged_step) {
  std::vector<CulpritHint> hints;
  for (const auto& p : PATTERNS) {
    std::regex re(p.regex, std::regex::ECMAScript | std::regex::icase);
    CulpritHint hint{p.id, p.message, p.fix, {}};
    std::set<std::string> distinct;  // the same line printed by every replica is one piece of evidence
    for (const auto& o : outcomes) {
      for (const auto& [stream, text] : {std::pair{"stderr", &o.stderr_tail}, std::pair{"stdout", &o.stdout_tail}}) {
        for (const auto& line : lines_of(*text)) {
          if (!std::regex_search(line, re)) continue;
          if (!distinct.insert(line).second) continue;
          if (hint.evidence.size() < EVIDENCE_PER_HINT) {
            hint.evidence.push_back("replica " + std::to_string(o.index) + " " + stream + ": " + line);
          }
        }
      }
    }
    // A seed line is a culprit only when the replicas printed different ones.
    if (std::string(p.id) == "random_seed_printed" && distinct.size() < 2) continue;
    if (!hint.evidence.empty()) hints.push_back(std::move(hint));
  }

  // The shape of the divergence.
  std::optional<int64_t> first;
  std::vector<std::string> at_first;
  for (const auto& m : comparison.metrics) {
    if (!m.first_divergent_step) continue;
    if (!first || *m.first_divergent_step < *first) {
      first = m.first_divergent_step;
      at_first.clear();
    }
    if (*m.first_divergent_step == *first) at_first.push_back(m.name);
  }
  if (first) {
    std::string metrics;
    for (const auto& n : at_first) metrics += (metrics.empty() ? "" : ", ") + n;
    if (*first <= first_logged_step) {
      hints.push_back({"diverges_from_first_step",
                       "The replicas differ from the first logged step: something random is not seeded (data "
                       "shuffling, weight initialisation, sampling), or the seed differs per replica.",
                       "Seed random, numpy and torch (torch.manual_seed), give DataLoaders a seeded generator, "
                       "and check that nothing derives a seed from time or os.urandom.",
                       {"first divergent step " + std::to_string(*first) + " (" + metrics + ")"}});
    } else {
      hints.push_back({"diverges_later",
                       "The replicas agree for a while, then differ: a nondeterministic kernel (atomics, reduction "
                       "order), a late random draw (evaluation sampling, dropout after a schedule), or an unseeded "
                       "source first used at that step.",
                       "Look at what starts at that step; enable torch.use_deterministic_algorithms(True); if the "
                       "differences are tiny and grow slowly, compare with --rtol/--atol instead of bitwise.",
                       {"first divergent step " + std::to_string(*first) + " (" + metrics + ")"}});
    }
  }
  return hints;
}

}  // namespace rldk
