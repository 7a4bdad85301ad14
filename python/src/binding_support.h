// What binding files share: the one translation of an engine Error into the matching rldk.errors exception.
#pragma once

#include <nanobind/nanobind.h>

#include <utility>

#include "rldk/result.h"

namespace rldk_py {

[[noreturn]] void raise(const rldk::Error& error);

template <class T>
T unwrap(rldk::Result<T> result) {
  if (!result.ok()) raise(result.error());
  return std::move(result).value();
}

// rldk._core functions of provenance (content hashes, lineage, run manifest diff): bind_provenance.cpp.
void bind_provenance(nanobind::module_& m);
// rldk._core contamination functions (check, shards, index, kernels): bind_contamination.cpp.
void bind_contamination(nanobind::module_& m);

}  // namespace rldk_py
