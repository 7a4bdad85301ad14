// A stdio stream that compresses what is written to it into another stream: gzip (zlib) or zstd, chosen by the
// output's file name, so `rldk ingest ... -o run.jsonl.gz` writes what its name says and every reader of rldk
// (which sniffs both) reads it back.
#pragma once

#include <cstdio>
#include <filesystem>

namespace rldk::io {

enum class OutputCodec { none, gzip, zstd };

OutputCodec codec_for_output(const std::filesystem::path& path);  // by extension: .gz, .zst/.zstd

// Returns a write-only stream compressing into `sink` (not owned, not closed); fclose() of the returned stream
// writes the end of the compressed frame and fails (EOF) when any write to `sink` failed. nullptr when out of memory.
std::FILE* open_compressing_stream(std::FILE* sink, OutputCodec codec);

}  // namespace rldk::io
