// check(): eval sets against training files in one process; check_shard() / merge_shards(): the same split across
// the nodes of a cluster (rldk.contamination.ray), each shard scanned by the same kernels, merged by the same rules.
#include "contamination/scan_state.h"

namespace rldk::contamination {
namespace {

Status validate(const std::vector<EvalSet>& sets, const CheckOptions& options) {
  if (sets.empty()) return Error{ErrorCode::invalid_argument, "no eval set to check", ""};
  if (!options.methods.ngram && !options.methods.llama2 && !options.methods.minhash) {
    return Error{ErrorCode::invalid_argument, "no method chosen", ""};
  }
  if (options.ngram.n && (*options.ngram.n < 1 || *options.ngram.n > 1000)) {
    return Error{ErrorCode::invalid_argument, "the n-gram length must be between 1 and 1000", ""};
  }
  const MinHashOptions& m = options.minhash;
  if (options.methods.minhash && (m.num_perm < 1 || m.num_perm > 4096 || m.shingle < 1 || !(m.threshold > 0) ||
                                  !(m.threshold <= 1))) {
    return Error{ErrorCode::invalid_argument,
                 "MinHash needs 1..4096 permutations, a shingle of at least 1 word and a threshold in (0, 1]", ""};
  }
  if (m.bands_rows && m.bands_rows->first * m.bands_rows->second > m.num_perm) {
    return Error{ErrorCode::invalid_argument, "bands x rows must not exceed the number of permutations", ""};
  }
  return Ok{};
}

Report finish(std::vector<EvalSet> sets, const EvalIndex& index, Partial partial, const CheckOptions& options,
              const std::vector<std::string>& train) {
  Lookup lookup = [&](uint64_t key) -> const TrainInfo* {
    uint32_t slot = index.table.find(key);
    return slot == NgramTable::MISSING ? nullptr : &partial.infos[slot];
  };
  Report report = finish_report(std::move(sets), index, lookup, &partial.near, options);
  report.train.sources = train;
  report.train.files = std::move(partial.files);
  report.train.fields = std::move(partial.fields);
  report.train.documents = partial.documents;
  report.train.bytes = partial.bytes;
  report.diagnostics.merge(partial.diagnostics);
  return report;
}

}  // namespace

Result<Report> check(const std::vector<std::string>& train, std::vector<EvalSet> sets, const CheckOptions& options) {
  Status ok = validate(sets, options);
  if (!ok.ok()) return ok.error();
  EvalIndex index = build_eval_index(sets, options);
  auto partial = scan_training(train, 0, index, options);
  if (!partial.ok()) return partial.error();
  return finish(std::move(sets), index, std::move(partial).value(), options, train);
}

Result<std::string> check_shard(const std::vector<std::string>& train_files, uint32_t first_file,
                                const std::vector<EvalSet>& sets, const CheckOptions& options) {
  Status ok = validate(sets, options);
  if (!ok.ok()) return ok.error();
  EvalIndex index = build_eval_index(sets, options);
  auto partial = scan_training(train_files, first_file, index, options);
  if (!partial.ok()) return partial.error();
  return serialize_partial(partial.value());
}

Result<Report> merge_shards(const std::vector<std::string>& train, std::vector<EvalSet> sets,
                            const std::vector<std::string>& partials, const CheckOptions& options) {
  Status ok = validate(sets, options);
  if (!ok.ok()) return ok.error();
  EvalIndex index = build_eval_index(sets, options);
  Partial merged;
  merged.infos.resize(index.table.size());
  merged.near.resize(index.texts.size());
  for (const auto& bytes : partials) {
    auto p = deserialize_partial(bytes, index);
    if (!p.ok()) return p.error();
    merge_partial(merged, std::move(p).value());
  }
  return finish(std::move(sets), index, std::move(merged), options, train);
}

}  // namespace rldk::contamination
