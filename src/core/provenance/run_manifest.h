// Run manifests (rldk.run-manifest/v1) compared as parsed documents: the file-free core of diff_run_manifests, also
// what the fuzz target drives.
#pragma once

#include <string>
#include <vector>

#include "json_document.h"
#include "rldk/provenance.h"

namespace rldk::provenance {

// The schema field names a run manifest.
Status check_run_manifest(const JsonDocument& doc, const std::string& context);
std::vector<ManifestChange> compare_run_manifests(const JsonDocument& a, const JsonDocument& b);

}  // namespace rldk::provenance
