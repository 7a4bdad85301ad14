// Training settings in text and in meta values (io/run_settings.h): the key must stand alone and the value must be
// a finite number, in every way configs are printed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/run_settings.h"

namespace {

std::vector<std::string> settings_in_text(std::string_view text) {
  std::vector<std::string> out;
  rldk::io::find_settings_in_text(text, rldk::MetricDictionary::builtin(),
                                  [&](const rldk::SettingInfo& s, std::string_view v) {
                                    out.push_back(s.name + "=" + std::string(v));
                                  });
  return out;
}

std::vector<std::string> settings_in_meta(std::string_view key, std::string_view value) {
  std::vector<std::string> out;
  rldk::io::find_settings_in_meta(key, value, rldk::MetricDictionary::builtin(),
                                  [&](const rldk::SettingInfo& s, std::string_view v) {
                                    out.push_back(s.name + "=" + std::string(v));
                                  });
  return out;
}

using Found = std::vector<std::string>;

TEST(RunSettings, EveryWayAConfigPrintsAKey) {
  EXPECT_EQ(settings_in_text("    'entropy_coeff': 0.05,"), Found{"entropy_coeff=0.05"});
  EXPECT_EQ(settings_in_text("python3 -m main actor_rollout_ref.actor.entropy_coeff=0 x=1"), Found{"entropy_coeff=0"});
  EXPECT_EQ(settings_in_text("  entropy_coef: 1e-3"), Found{"entropy_coeff=0.001"});
  EXPECT_EQ(settings_in_text("{\"entropy_loss_coef\": 0.01}"), Found{"entropy_coeff=0.01"});
  EXPECT_EQ(settings_in_text("train.py --entropy_loss_coef 0.02 --lr 1e-6"), Found{"entropy_coeff=0.02"});
  EXPECT_EQ(settings_in_text("ent_coef = '0.0'"), Found{"entropy_coeff=0"});
  // In any case, as meta keys are matched.
  EXPECT_EQ(settings_in_text("ENTROPY_COEF=0.02 Entropy_Coeff: 0.03"), (Found{"entropy_coeff=0.02", "entropy_coeff=0.03"}));
}

// Reported in the order printed, so the last value on a line is the one that stays; a number printed with a
// thousand digits is kept as rldk prints numbers.
TEST(RunSettings, InTheOrderPrinted) {
  EXPECT_EQ(settings_in_text("+actor.entropy_coef=0.05 actor_rollout_ref.actor.entropy_coeff=0"),
            (Found{"entropy_coeff=0.05", "entropy_coeff=0"}));
  EXPECT_EQ(settings_in_text("entropy_coeff=0." + std::string(1000, '1')), Found{"entropy_coeff=0.1111111111111111"});
}

TEST(RunSettings, OnlyAStandaloneKeyWithAFiniteNumber) {
  EXPECT_EQ(settings_in_text("my_entropy_coeff=0.2 entropy_coeff_max: 0.4 xentropy_coef=1"), Found{});
  EXPECT_EQ(settings_in_text("entropy_coeff: ${oc.env:COEF} entropy_coef=0.05abc 'entropy_coeff': None"), Found{});
  EXPECT_EQ(settings_in_text("entropy_coeff: nan entropy_coeff=inf --entropy_coef"), Found{});
  EXPECT_EQ(settings_in_text("entropy_coeff 0.05"), Found{});  // spaces separate only a command-line flag
  EXPECT_EQ(settings_in_text("the entropy_coeff was raised"), Found{});
}

TEST(RunSettings, MetaValuesAndNestedConfigs) {
  EXPECT_EQ(settings_in_meta("params.entropy_coef", "0.01"), Found{"entropy_coeff=0.01"});
  EXPECT_EQ(settings_in_meta("params.entropy_coef", "auto"), Found{});
  EXPECT_EQ(settings_in_meta("config.actor_rollout_ref",
                             R"({"actor": {"clip_ratio": 0.2, "entropy_coeff": 0.05, "name": "x"}, "rollout": {"n": 5}})"),
            Found{"entropy_coeff=0.05"});
  EXPECT_EQ(settings_in_meta("config.trainer", R"({"total_epochs": 3})"), Found{});
  EXPECT_EQ(settings_in_meta("config.actor", R"({"entropy_coeff": "high"})"), Found{});
  // A config whose keys are long and many is read in time linear in its size (flattening it would copy each key's
  // path: gigabytes for a 1 MB value).
  std::string hostile = "{\"" + std::string(400000, 'k') + "\": {";
  for (int i = 0; i < 50000; ++i) hostile += "\"a\":0,";
  hostile += "\"entropy_coeff\": 0.05}}";
  EXPECT_EQ(settings_in_meta("config.x", hostile), Found{"entropy_coeff=0.05"});
}

}  // namespace
