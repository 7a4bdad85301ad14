// The canonical metric dictionary (data/metrics.yaml, include/rldk/metric_dictionary.h).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "model/embedded_data.h"
#include "rldk/metric_dictionary.h"

namespace {

using rldk::FieldRole;
using rldk::MetricDictionary;

TEST(MetricDictionary, BuiltinLoads) {
  const MetricDictionary& dict = MetricDictionary::builtin();
  EXPECT_GT(dict.metrics().size(), 50u);
  const rldk::MetricInfo* kl = dict.find("policy/kl");
  ASSERT_NE(kl, nullptr);
  EXPECT_EQ(kl->unit, "nats");
  EXPECT_EQ(kl->aggregation, "token_mean");
  EXPECT_EQ(kl->aliases.at("trl"), std::vector<std::string>{"kl"});
  EXPECT_EQ(dict.find("kl"), kl);  // a raw alias finds the same entry
  EXPECT_EQ(dict.find("no/such_metric"), nullptr);
}

TEST(MetricDictionary, EmbeddedYamlParsesCleanly) {
  std::string_view text = rldk::embedded_file("metrics.yaml");
  ASSERT_FALSE(text.empty());
  auto parsed = MetricDictionary::from_yaml(text, "data/metrics.yaml");
  ASSERT_TRUE(parsed.ok()) << rldk::to_string(parsed.error());
  EXPECT_EQ(parsed.value()->metrics().size(), MetricDictionary::builtin().metrics().size());
}

TEST(MetricDictionary, EveryEntryIsComplete) {
  std::set<std::string> names;
  for (const auto& m : MetricDictionary::builtin().metrics()) {
    EXPECT_NE(m.name.find('/'), std::string::npos) << m.name << " is not slash-namespaced";
    EXPECT_FALSE(m.unit.empty()) << m.name;
    EXPECT_FALSE(m.aggregation.empty()) << m.name;
    EXPECT_FALSE(m.description.empty()) << m.name;
    EXPECT_TRUE(names.insert(m.name).second) << m.name << " is defined twice";
  }
}

TEST(MetricDictionary, NoAliasClaimedTwice) {
  const MetricDictionary& dict = MetricDictionary::builtin();
  std::map<std::string, std::string> owner;  // alias -> canonical name
  std::set<std::string> canonical;
  for (const auto& m : dict.metrics()) canonical.insert(m.name);
  for (const auto& m : dict.metrics()) {
    for (const auto& [framework, aliases] : m.aliases) {
      for (const auto& alias : aliases) {
        auto [it, inserted] = owner.emplace(alias, m.name);
        EXPECT_TRUE(inserted || it->second == m.name)
            << "alias '" << alias << "' claimed by " << it->second << " and " << m.name;
        EXPECT_TRUE(canonical.count(alias) == 0 || alias == m.name)
            << "alias '" << alias << "' of " << m.name << " is another canonical name";
        EXPECT_EQ(dict.canonical_name(alias), m.name) << framework << " alias " << alias;
      }
    }
  }
  EXPECT_GT(owner.size(), 150u);
}

struct NameCase {
  const char* raw;
  const char* canonical;
};

void PrintTo(const NameCase& c, std::ostream* os) { *os << "'" << c.raw << "' -> '" << c.canonical << "'"; }

class CanonicalName : public ::testing::TestWithParam<NameCase> {};

TEST_P(CanonicalName, MapsAsDocumented) {
  EXPECT_EQ(MetricDictionary::builtin().canonical_name(GetParam().raw), GetParam().canonical) << GetParam().raw;
}

INSTANTIATE_TEST_SUITE_P(
    Frameworks, CanonicalName,
    ::testing::Values(
        // TRL
        NameCase{"kl", "policy/kl"}, NameCase{"objective/kl", "policy/kl_seq"},
        NameCase{"objective/entropy", "policy/entropy_seq"}, NameCase{"entropy", "policy/entropy"},
        NameCase{"objective/scores", "reward/mean"}, NameCase{"reward", "reward/mean"},
        NameCase{"grad_norm", "policy/grad_norm"}, NameCase{"learning_rate", "policy/lr"},
        NameCase{"loss", "train/loss"}, NameCase{"epoch", "train/epoch"},
        NameCase{"completions/mean_length", "response/length_mean"}, NameCase{"rewards/chosen", "pref/rewards_chosen"},
        NameCase{"frac_reward_zero_std", "reward/frac_zero_std"}, NameCase{"train_runtime", "summary/train_runtime"},
        // OpenRLHF
        NameCase{"actor_grad_norm", "policy/grad_norm"}, NameCase{"ppo_kl", "policy/approx_kl"},
        NameCase{"policy_loss", "policy/loss"}, NameCase{"critic_loss", "value/loss"},
        NameCase{"truncated", "response/clipped_frac"}, NameCase{"timing/step_total", "perf/step_time"},
        // verl
        NameCase{"actor/ppo_kl", "policy/approx_kl"}, NameCase{"actor/reward_kl_penalty", "policy/kl"},
        NameCase{"actor/kl_loss", "policy/kl_loss"}, NameCase{"actor/pg_loss", "policy/loss"},
        NameCase{"critic/score/mean", "reward/mean"}, NameCase{"critic/vf_loss", "value/loss"},
        NameCase{"response_length/mean", "response/length_mean"}, NameCase{"timing_s/step", "perf/step_time"},
        NameCase{"training/epoch", "train/epoch"},
        // verl's rollout correction: the k3 trainer/rollout KL is read, the direct estimator (it can dip below 0) not
        NameCase{"rollout_corr/k3_kl", "rollout/vllm_kl"}, NameCase{"mismatch/mismatch_k3_kl", "rollout/vllm_kl"},
        NameCase{"rollout_corr/kl", "rollout_corr/kl"}, NameCase{"rollout_corr/rollout_is_mean", "rollout/is_ratio_mean"},
        NameCase{"rollout_corr/rollout_is_max", "rollout_corr/rollout_is_max"},
        // XTuner's RL trainer
        NameCase{"response/rewards/mean", "reward/mean"}, NameCase{"response/response_len/mean", "response/length_mean"},
        NameCase{"entropy/train", "policy/entropy"}, NameCase{"mismatch/mismatch_logprob_abs_diff", "rollout/logprob_diff"},
        // legacy rldk
        NameCase{"kl_mean", "policy/kl"}, NameCase{"reward_mean", "reward/mean"},
        NameCase{"entropy_mean", "policy/entropy"}, NameCase{"clip_frac", "policy/clip_frac"},
        // backend prefixes and evaluation variants
        NameCase{"train/reward", "reward/mean"}, NameCase{"train/kl", "policy/kl"},
        NameCase{"train/loss", "train/loss"},  // a canonical name itself
        NameCase{"eval_loss", "eval/loss"}, NameCase{"eval/reward", "eval/reward"}, NameCase{"test_acc", "test/acc"},
        // canonical names and unknown names are kept as they are
        NameCase{"policy/kl", "policy/kl"}, NameCase{"my/custom_metric", "my/custom_metric"},
        NameCase{"train_loss", "train_loss"}, NameCase{"train/", "train/"},
        // names printed for people are folded (lower case, spaces and dashes as underscores) before giving up
        NameCase{"KL", "policy/kl"}, NameCase{"KL_ref", "policy/kl"}, NameCase{"Adv Std", "advantage/std"},
        NameCase{"My Metric", "My Metric"},
        // flattened exports: a framework's alias without case and separators (a verl metrics CSV rebuilt from the
        // console); rldk's own canonical names are not matched this way (HF's closing `train_loss` stays apart)
        NameCase{"critic_score_mean", "reward/mean"}, NameCase{"response_length_clip_ratio", "response/clipped_frac"},
        NameCase{"actor_entropy", "policy/entropy"}, NameCase{"Critic.Score.Mean", "reward/mean"},
        NameCase{"value_loss", "value/loss"},
        NameCase{"eval_", "eval_"}, NameCase{"", ""}));

TEST(MetricDictionary, RoleOfFieldKeys) {
  const MetricDictionary& dict = MetricDictionary::builtin();
  struct Case {
    const char* key;
    FieldRole role;
  };
  for (const Case& c : {Case{"step", FieldRole::step}, Case{"global_step", FieldRole::step},
                        Case{"_step", FieldRole::step}, Case{"train/global_step", FieldRole::step},
                        Case{"training/global_step", FieldRole::step}, Case{"trainer/global_step", FieldRole::step},
                        Case{"iteration", FieldRole::step}, Case{"iter", FieldRole::step},
                        Case{"timestep", FieldRole::step}, Case{"time/total_timesteps", FieldRole::step},
                        Case{"time", FieldRole::time}, Case{"timestamp", FieldRole::time},
                        Case{"wall_time", FieldRole::time}, Case{"walltime", FieldRole::time},
                        Case{"_timestamp", FieldRole::time}, Case{"run_id", FieldRole::run_id},
                        Case{"run", FieldRole::run_id}, Case{"_runtime", FieldRole::ignored},
                        Case{"_wandb", FieldRole::ignored}, Case{"loss", FieldRole::metric},
                        // column headers written for people: a CSV's "Step", "Global Step"
                        Case{"Step", FieldRole::step}, Case{"Global Step", FieldRole::step},
                        Case{"Iteration", FieldRole::step}, Case{"steps", FieldRole::metric},
                        Case{"Stepper", FieldRole::metric},
                        Case{"epoch", FieldRole::metric}, Case{"time/fps", FieldRole::metric}}) {
    EXPECT_EQ(static_cast<int>(dict.role_of(c.key)), static_cast<int>(c.role)) << c.key;
  }
}

TEST(MetricDictionary, StepKeyPriority) {
  const MetricDictionary& dict = MetricDictionary::builtin();
  // A header written for people is a step after every exact step key: W&B's own _step beats a logged "Step".
  EXPECT_GT(dict.step_key_priority("Step"), dict.step_key_priority("_step"));
  EXPECT_GE(dict.step_key_priority("Global Step"), 0);
  EXPECT_EQ(dict.step_key_priority("step"), 0);
  EXPECT_LT(dict.step_key_priority("step"), dict.step_key_priority("global_step"));
  EXPECT_LT(dict.step_key_priority("global_step"), dict.step_key_priority("_step"));
  EXPECT_EQ(dict.step_key_priority("loss"), -1);
}

const char* HEADER = "fields:\n  step: [step]\nmetrics:\n";

std::string metric(const std::string& name, const std::string& aliases) {
  return "  - name: " + name + "\n    unit: u\n    aggregation: scalar\n    description: d\n    aliases:\n" + aliases;
}

TEST(MetricDictionaryFromYaml, SmallDictionaryWorks) {
  std::string yaml = std::string(HEADER) + metric("a/x", "      trl: [shared, x1]\n      verl: [shared]\n") +
                     metric("b/y", "      verl: [y1]\n");
  auto dict = MetricDictionary::from_yaml(yaml, "small.yaml");
  ASSERT_TRUE(dict.ok()) << rldk::to_string(dict.error());
  EXPECT_EQ(dict.value()->canonical_name("shared"), "a/x");  // the same alias in two frameworks of one metric
  EXPECT_EQ(dict.value()->canonical_name("y1"), "b/y");
  EXPECT_EQ(dict.value()->canonical_name("kl"), "kl");  // not in this dictionary
  EXPECT_EQ(dict.value()->canonical_name("Y_1"), "b/y");   // the alias without case and separators
  EXPECT_EQ(dict.value()->canonical_name("a_x"), "a_x");   // a canonical name is not matched loosely
  EXPECT_EQ(static_cast<int>(dict.value()->role_of("step")), static_cast<int>(FieldRole::step));
  EXPECT_EQ(static_cast<int>(dict.value()->role_of("time")), static_cast<int>(FieldRole::metric));
}

// Two metrics whose aliases differ only in separators: the loose key is no evidence for either.
TEST(MetricDictionaryFromYaml, LooseKeySharedByTwoMetricsMatchesNeither) {
  std::string yaml = std::string(HEADER) + metric("a/x", "      trl: [kl/seq]\n") + metric("b/y", "      verl: [kl_seq]\n");
  auto dict = MetricDictionary::from_yaml(yaml, "small.yaml");
  ASSERT_TRUE(dict.ok()) << rldk::to_string(dict.error());
  EXPECT_EQ(dict.value()->canonical_name("kl/seq"), "a/x");
  EXPECT_EQ(dict.value()->canonical_name("kl_seq"), "b/y");
  EXPECT_EQ(dict.value()->canonical_name("KL.Seq"), "KL.Seq");
}

TEST(MetricDictionaryFromYaml, RejectsConflicts) {
  struct Case {
    const char* name;
    std::string yaml;
    std::vector<std::string> message_mentions;
  };
  const Case cases[] = {
      {"alias_claimed_twice",
       std::string(HEADER) + metric("a/x", "      trl: [shared]\n") + metric("b/y", "      verl: [shared]\n"),
       {"shared", "a/x", "b/y"}},
      {"canonical_defined_twice",
       std::string(HEADER) + metric("a/x", "      trl: [p]\n") + metric("a/x", "      trl: [q]\n"),
       {"a/x", "twice"}},
      {"alias_is_another_canonical_name",
       std::string(HEADER) + metric("a/x", "      trl: [b/y]\n") + metric("b/y", "      trl: [q]\n"),
       {"b/y"}},
      {"invalid_yaml", "metrics: [\n", {"invalid"}},
      {"missing_unit", std::string(HEADER) + "  - name: a/x\n    aggregation: scalar\n    description: d\n", {}},
  };
  for (const Case& c : cases) {
    auto dict = MetricDictionary::from_yaml(c.yaml, "bad.yaml");
    ASSERT_FALSE(dict.ok()) << c.name;
    EXPECT_EQ(static_cast<int>(dict.error().code), static_cast<int>(rldk::ErrorCode::invalid_argument)) << c.name;
    EXPECT_EQ(dict.error().context, "bad.yaml") << c.name;
    for (const auto& word : c.message_mentions) {
      EXPECT_NE(dict.error().message.find(word), std::string::npos) << c.name << ": " << dict.error().message;
    }
  }
}

}  // namespace
