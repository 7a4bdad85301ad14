// Record-based (binary) formats, beside the line-based ones of line_format.h: TensorBoard event files (TFRecord
// framing) and W&B transaction logs (LevelDB-log framing). The StreamReader recognises them from their first bytes
// or their file name and then hands them every byte unchanged, in whatever chunks the bytes arrive, so the same
// parser reads a finished file and tails a growing one: a record split across two feeds waits in a small buffer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "io/records.h"
#include "rldk/reader.h"

namespace rldk::io {

class RecordFormat {
 public:
  virtual ~RecordFormat() = default;
  virtual void feed(std::string_view bytes) = 0;
  // The end of one file whose run goes on in the next (a TensorBoard log dir's event files): an incomplete last
  // record is reported and framing starts afresh. Formats whose runs are single files ignore it.
  virtual void end_file() {}
  // End of data: an incomplete last record is reported (a writer was cut off, or the file was truncated).
  virtual void finish() = 0;
  virtual std::string detail() const = 0;
  virtual uint64_t records() const = 0;  // complete records seen so far, good or bad
};

std::unique_ptr<RecordFormat> make_tensorboard_format(ReadContext& context);
std::unique_ptr<RecordFormat> make_wandb_format(ReadContext& context);

// How many leading bytes sniff_binary_format wants (fewer only at the end of a short file).
constexpr size_t BINARY_SNIFF_BYTES = 12;

// TensorBoard when the file name is an event file name (events.out.tfevents.*) or the data starts with a TFRecord
// header whose length checksum is right; W&B when it starts with the ":W&B" header or is named *.wandb; unknown
// otherwise (a text log). Names count so that a file whose first bytes are damaged is still read, and reported.
Format sniff_binary_format(std::string_view head, std::string_view path);

// True when `head` (fewer than BINARY_SNIFF_BYTES) already rules out both binary formats, under a name that is not
// an event file's or a .wandb log's: not the start of ":W&B", and a complete line without NUL bytes or a length no
// TFRecord header can have. Lets a short first line of a live text stream be read at once instead of waiting for
// more bytes, and binary data that is neither format be recognised as such.
bool text_so_far(std::string_view head, std::string_view path);

// True for Format values read by a RecordFormat.
bool is_record_format(Format format);

}  // namespace rldk::io
