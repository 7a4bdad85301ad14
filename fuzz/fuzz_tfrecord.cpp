// Arbitrary bytes read as a TensorBoard event file (TFRecord framing, Event protos), in chunks of varying size: no crash,
// no overread, every counted point delivered. Seeds are files written by the real library (fuzz/corpus/tfrecord).
#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rldk::fuzz::read_bytes(data, size, rldk::Format::tensorboard);
  return 0;
}
