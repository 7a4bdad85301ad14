// read_samples(): the cells of a file or folder (read_table) assembled into per-completion SampleRows.
#include "rldk/samples.h"
#include "samples/cell_sink.h"
#include "samples/sample_assembler.h"

namespace rldk {

Status read_samples(const std::string& path, const SampleReadOptions& options, SampleSink& sink,
                    Diagnostics& diagnostics) {
  samples::SampleAssembler assembler(options, sink, diagnostics);
  return samples::read_table(path, assembler, diagnostics);
}

}  // namespace rldk
