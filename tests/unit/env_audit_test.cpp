// The env audit's code scanner and check table, and bisect's comparison parser: table-driven, no Python needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "rldk/bisect.h"
#include "rldk/env_audit.h"

namespace rldk {
namespace {

std::vector<std::string> kinds_of(std::string_view source) {
  CodeScan scan;
  scan_python_source("t.py", source, scan);
  std::vector<std::string> kinds;
  for (const auto& e : scan.evidence) kinds.push_back(e.kind + "@" + e.location.substr(e.location.find(':') + 1));
  return kinds;
}

struct ScanCase {
  const char* source;
  std::vector<std::string> expected;
};

TEST(EnvAuditScan, ClassifiesCallsAndAssignments) {
  const ScanCase cases[] = {
      {"import torch\ntorch.manual_seed(1)\n", {"torch_manual_seed@2"}},
      {"torch.cuda.manual_seed_all(3)\n", {"torch_cuda_seed@1"}},
      {"import random\nrandom.seed(0)\nrandom.shuffle(x)\n", {"python_seed@2", "python_random_use@3"}},
      {"np.random.seed(0)\nnp.random.normal(size=3)\n", {"numpy_seed@1", "numpy_random_use@2"}},
      {"rng = np.random.default_rng(7)\n", {"numpy_seed@1"}},
      {"rng = np.random.default_rng()\n", {"entropy_seed@1"}},
      {"g = torch.Generator()\ng.seed()\n", {"entropy_seed@2"}},
      {"random.seed(time.time())\n", {"entropy_seed@1"}},
      {"g = torch.Generator().manual_seed(0)\n", {"generator_seed@1"}},
      {"from transformers import set_seed\nset_seed(42)\n", {"global_seed_helper@2"}},
      {"set_seed(42, deterministic=True)\n", {"global_seed_helper@1", "deterministic_on@1"}},
      {"rldk.seed.set_global_seed(1)\n", {"global_seed_helper@1", "deterministic_on@1"}},
      {"rldk.seed.set_global_seed(1, deterministic=False)\n", {"global_seed_helper@1"}},
      {"torch.use_deterministic_algorithms(True)\n", {"deterministic_on@1"}},
      {"torch.use_deterministic_algorithms(mode=False)\n", {"deterministic_off@1"}},
      {"torch.backends.cudnn.benchmark = True\n", {"cudnn_benchmark_true@1"}},
      {"torch.backends.cudnn.benchmark=False\n", {"cudnn_benchmark_false@1"}},
      {"if torch.backends.cudnn.benchmark == True: pass\n", {}},
      {"torch.backends.cudnn.deterministic = False\n", {"cudnn_deterministic_false@1"}},
      {"torch.backends.cuda.matmul.allow_tf32 = True\n", {"tf32_enabled@1"}},
      // Comments and strings are not code.
      {"# torch.backends.cudnn.benchmark = True\nx = 'random.seed()'\n\"\"\"\ng.seed()\n\"\"\"\n", {}},
      // A definition is not a call.
      {"class Env:\n    def seed(self):\n        pass\n", {}},
      {"loader = DataLoader(ds,\n    shuffle=True)\n", {"dataloader_shuffle_no_generator@1"}},
      {"loader = DataLoader(ds, shuffle=True, generator=g)\n", {"dataloader_shuffle_generator@1"}},
      {"loader = DataLoader(ds, shuffle=False, num_workers=0)\n", {}},
      {"loader = DataLoader(ds, num_workers=4)\n", {"dataloader_workers_no_seed@1"}},
      {"loader = DataLoader(ds, num_workers=4, worker_init_fn=seed_worker)\n", {}},
      {"loader = DataLoader(ds, **kwargs)\n", {}},
      {"import os\nnoise = os.urandom(8)\n", {"os_urandom@2"}},
      {"os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'\n", {"sets_cublas_workspace@1"}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(kinds_of(c.source), c.expected) << c.source;
  }
}

TEST(EnvAuditScan, RecordsTrackedImportsOnly) {
  CodeScan scan;
  scan_python_source("a.py", "import os, random\nimport numpy as np\nfrom torch.utils.data import DataLoader\n", scan);
  EXPECT_EQ(scan.imports, (std::vector<std::string>{"numpy", "random", "torch"}));
}

const EnvCheck& find_check(const std::vector<EnvCheck>& checks, const std::string& id) {
  auto it = std::find_if(checks.begin(), checks.end(), [&](const EnvCheck& c) { return c.id == id; });
  EXPECT_NE(it, checks.end()) << id;
  return *it;
}

std::vector<EnvCheck> checks_for(std::string_view source, std::map<std::string, std::string> env = {},
                                 PythonEnvironment python = {}) {
  CodeScan scan;
  scan_python_source("train.py", source, scan);
  return evaluate_env_checks(python, env, &scan, false);
}

TEST(EnvAuditChecks, CleanCodePassesAndBrokenCodeFails) {
  auto clean = checks_for(
      "import torch\nimport random\ntorch.manual_seed(0)\nrandom.seed(0)\nrandom.random()\n"
      "torch.use_deterministic_algorithms(True)\n",
      {{"PYTHONHASHSEED", "0"}});
  EnvAudit audit;
  audit.checks = clean;
  EXPECT_EQ(audit.status(), CheckStatus::pass);
  EXPECT_EQ(find_check(clean, "code.seeding").status, CheckStatus::pass);

  auto unseeded = checks_for("import torch\nimport random\nrandom.random()\n");
  const EnvCheck& seeding = find_check(unseeded, "code.seeding");
  EXPECT_EQ(seeding.status, CheckStatus::fail);
  EXPECT_EQ(seeding.summary, "not seeded: torch, random");
  EXPECT_EQ(seeding.evidence.front(), "train.py:3: random.random()");
  EXPECT_FALSE(seeding.fix.empty());
  EXPECT_EQ(find_check(unseeded, "env.pythonhashseed").status, CheckStatus::warn);
  EXPECT_EQ(find_check(unseeded, "code.deterministic_algorithms").status, CheckStatus::warn);

  // A global helper seeds everything at once.
  auto helper = checks_for("import torch\nimport numpy as np\nnp.random.rand()\nset_seed(1)\n");
  EXPECT_EQ(find_check(helper, "code.seeding").status, CheckStatus::pass);
  EXPECT_EQ(find_check(checks_for("x = 1\n"), "code.seeding").status, CheckStatus::skip);
}

TEST(EnvAuditChecks, EnvironmentVariables) {
  EXPECT_EQ(find_check(checks_for("", {{"PYTHONHASHSEED", "random"}}), "env.pythonhashseed").status,
            CheckStatus::fail);
  EXPECT_EQ(find_check(checks_for("", {{"PYTHONHASHSEED", "12"}}), "env.pythonhashseed").status, CheckStatus::pass);
  PythonEnvironment gpu;
  gpu.probed = true;
  gpu.interpreter = "python";
  gpu.torch = {{"cuda_available", "True"}, {"cuda_matmul_allow_tf32", "False"},
               {"float32_matmul_precision", "highest"}};
  EXPECT_EQ(find_check(checks_for("", {}, gpu), "env.cublas_workspace").status, CheckStatus::warn);
  EXPECT_EQ(find_check(checks_for("torch.use_deterministic_algorithms(True)\n", {}, gpu), "env.cublas_workspace")
                .status,
            CheckStatus::fail);
  EXPECT_EQ(find_check(checks_for("", {{"CUBLAS_WORKSPACE_CONFIG", ":4096:8"}}, gpu), "env.cublas_workspace").status,
            CheckStatus::pass);
  EXPECT_EQ(find_check(checks_for("", {{"CUBLAS_WORKSPACE_CONFIG", ":1:1"}}, gpu), "env.cublas_workspace").status,
            CheckStatus::fail);
  EXPECT_EQ(find_check(checks_for("", {}, gpu), "python.tf32").status, CheckStatus::pass);
  EXPECT_EQ(find_check(checks_for(""), "env.cublas_workspace").status, CheckStatus::skip);  // no CUDA
}

TEST(EnvAuditChecks, InterpreterFindings) {
  PythonEnvironment missing;
  missing.interpreter = "/nope/python";
  missing.error = "interpreter /nope/python does not exist or is not executable";
  auto named = evaluate_env_checks(missing, {}, nullptr, true);
  EXPECT_EQ(find_check(named, "python.interpreter").status, CheckStatus::fail);
  EXPECT_EQ(named.size(), 6u);  // no code checks without a scan
  PythonEnvironment none;
  none.error = "no Python interpreter found ($VIRTUAL_ENV unset, no python3 on PATH)";
  EXPECT_EQ(find_check(evaluate_env_checks(none, {}, nullptr, false), "python.interpreter").status,
            CheckStatus::skip);
}

TEST(EnvAuditRender, JsonAndMarkdown) {
  EnvAudit audit;
  audit.checks = checks_for("import torch\ntorch.backends.cudnn.benchmark = True\n", {{"PYTHONHASHSEED", "0"}});
  std::string json = env_audit_json(audit).dump(-1);
  EXPECT_NE(json.find("\"schema\":\"rldk.env-audit/v1\""), std::string::npos);
  EXPECT_NE(json.find("\"status\":\"fail\""), std::string::npos);
  std::string md = env_audit_markdown(audit);
  EXPECT_EQ(md.rfind("## Environment audit: fail\n", 0), 0u);
  EXPECT_NE(md.find("- `train.py:2: torch.backends.cudnn.benchmark = True`"), std::string::npos);
}

TEST(BisectComparison, ParsesOperatorAndNumberOnly) {
  struct Case {
    const char* text;
    bool ok;
    CompareOp op;
    double threshold;
  };
  const Case cases[] = {
      {"> 0.87", true, CompareOp::greater, 0.87},   {">=0.5", true, CompareOp::greater_equal, 0.5},
      {" < -1e-3 ", true, CompareOp::less, -1e-3},  {"<= 2", true, CompareOp::less_equal, 2},
      {"== 1", true, CompareOp::equal, 1},          {"!= 0", true, CompareOp::not_equal, 0},
      {"0.87", false, {}, 0},                       {"> ", false, {}, 0},
      {"> nan", false, {}, 0},                      {"> inf", false, {}, 0},
      {"> 0.8; rm -rf /", false, {}, 0},            {"= 0.8", false, {}, 0},
      {"> 1e999", false, {}, 0},                    {"__import__('os')", false, {}, 0},
  };
  for (const auto& c : cases) {
    auto parsed = parse_comparison(c.text);
    ASSERT_EQ(parsed.ok(), c.ok) << c.text;
    if (!c.ok) continue;
    EXPECT_EQ(parsed->op, c.op) << c.text;
    EXPECT_EQ(parsed->threshold, c.threshold) << c.text;
  }
  Comparison gt{CompareOp::greater, 0.87};
  EXPECT_EQ(gt.describe(), "> 0.87");
  EXPECT_TRUE(gt.holds(0.9));
  EXPECT_FALSE(gt.holds(0.87));
  EXPECT_FALSE(Comparison({CompareOp::not_equal, 0}).holds(std::nan("")));
}

}  // namespace
}  // namespace rldk
