// Format detection from the first non-empty line and the file name (src/core/io/sniff.cpp).
#include <gtest/gtest.h>

#include <string>

#include "io/line_format.h"
#include "rldk/reader.h"

namespace {

using rldk::Format;
using rldk::io::sniff_format;

struct SniffCase {
  const char* name;
  std::string first_line;
  std::string path;
  Format expected;
};

void PrintTo(const SniffCase& c, std::ostream* os) { *os << "'" << c.first_line << "' (" << c.path << ")"; }

class SniffFormat : public ::testing::TestWithParam<SniffCase> {};

TEST_P(SniffFormat, Detects) {
  const auto& c = GetParam();
  EXPECT_EQ(rldk::format_name(sniff_format(c.first_line, c.path)), rldk::format_name(c.expected))
      << "'" << c.first_line << "' (" << c.path << ")";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SniffFormat,
    ::testing::Values(
        // JSON Lines: a complete object with double-quoted keys.
        SniffCase{"jsonl_long_form", R"({"name":"policy/kl","step":1,"value":0.1})", "events.log", Format::jsonl},
        SniffCase{"jsonl_wide", R"({"step": 1, "loss": 0.5, "kl": NaN})", "metrics.jsonl", Format::jsonl},
        SniffCase{"jsonl_verl", R"({"step": 3, "data": {"actor/ppo_kl": 0.01}})", "verl.jsonl", Format::jsonl},
        SniffCase{"jsonl_with_crlf", "{\"step\": 1, \"loss\": 0.5}\r", "m.jsonl", Format::jsonl},
        SniffCase{"jsonl_indented", "  {\"step\": 1}", "m.txt", Format::jsonl},
        // Whole documents.
        SniffCase{"document_open_brace_alone", "{", "trainer_state.json", Format::json_document},
        SniffCase{"document_open_brace_with_spaces", "  {  ", "x.json", Format::json_document},
        SniffCase{"document_one_line_trainer_state",
                  R"({"best_metric": null, "global_step": 20, "log_history": [{"loss": 0.5, "step": 10}]})",
                  "trainer_state.json", Format::json_document},
        SniffCase{"document_array_open", "[", "records.json", Format::json_document},
        SniffCase{"document_array_of_records", R"([{"step": 1, "loss": 0.5}])", "records.json",
                  Format::json_document},
        // Console text.
        SniffCase{"console_hf_dict", "{'loss': 0.6931, 'grad_norm': 1.25, 'learning_rate': 1e-06, 'epoch': 0.01}",
                  "train.log", Format::console},
        SniffCase{"console_openrlhf", "INFO 08-13 19:01:45 ppo_trainer.py:547] Global step 1: {'policy_loss': 0.1}",
                  "train.log", Format::console},
        SniffCase{"console_verl_ray_prefix", "(TaskRunner pid=3165) step:1 - actor/entropy:0.59", "verl.log",
                  Format::console},
        SniffCase{"console_key_value", "step=10 kl=0.12 reward_mean=0.5", "out.txt", Format::console},
        SniffCase{"console_key_value_with_commas", "step=1, loss=0.5, kl=0.1", "out.txt", Format::console},
        SniffCase{"console_prose_with_commas", "Loading model, tokenizer and reference policy, please wait", "out.txt",
                  Format::console},
        SniffCase{"console_prose_single_word", "Starting", "out.txt", Format::console},
        SniffCase{"console_timestamp_with_comma", "2024-05-01 12:00:00,123 INFO trainer started", "out.log",
                  Format::console},
        // Console logs very often begin with a bracketed timestamp or level (DeepSpeed, Hydra, Lightning): that is
        // text, not a JSON array.
        SniffCase{"console_deepspeed_bracket_prefix",
                  "[2024-05-01 12:00:00,000] [INFO] [real_accelerator.py:191:get_accelerator] Setting ds_accelerator "
                  "to cuda (auto detect)",
                  "train.log", Format::console},
        SniffCase{"console_hydra_bracket_prefix", "[2024-05-01 12:00:00,000][__main__][INFO] - Starting PPO",
                  "train.log", Format::console},
        SniffCase{"console_level_bracket", "[INFO] step=1 loss=0.5", "train.log", Format::console},
        // Delimited headers.
        SniffCase{"csv_header", "step,loss,kl", "metrics.log", Format::csv},
        SniffCase{"csv_quoted_header", R"("step","loss")", "metrics.log", Format::csv},
        SniffCase{"csv_sb3_header", "time/total_timesteps,rollout/ep_rew_mean,time/fps", "progress.txt",
                  Format::csv},
        SniffCase{"tsv_header", "step\tloss\tkl", "metrics.log", Format::tsv},
        SniffCase{"csv_data_row_is_not_a_header", "1,0.5,0.1", "metrics.log", Format::console},
        // Only .csv/.tsv names are trusted, whatever the content (compressed names included).
        SniffCase{"csv_by_name", "1,0.5", "progress.csv", Format::csv},
        SniffCase{"csv_by_name_gz", "whatever", "progress.CSV.gz", Format::csv},
        SniffCase{"tsv_by_name_zst", "whatever", "dir.d/metrics.tsv.zst", Format::tsv},
        SniffCase{"name_in_folder_not_trusted", "hello there", "logs.csv/train.log", Format::console},
        // Nothing to decide on yet.
        SniffCase{"blank", "", "x.log", Format::unknown}, SniffCase{"spaces", "  \t \r", "x.log", Format::unknown}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
