#include <gtest/gtest.h>
#include "rldk/metric_dictionary.h"
TEST(Smoke, Dictionary) { EXPECT_EQ(rldk::MetricDictionary::builtin().canonical_name("kl"), "policy/kl"); }
