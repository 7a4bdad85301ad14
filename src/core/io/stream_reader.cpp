#include <algorithm>
#include <cstring>
#include <optional>

#include "io/line_format.h"
#include "io/point_emitter.h"
#include "io/record_format.h"
#include "io/records.h"
#include "io/utf16.h"
#include "rldk/reader.h"

namespace rldk {

std::string format_name(Format format) {
  switch (format) {
    case Format::unknown: return "unknown";
    case Format::jsonl: return "jsonl";
    case Format::json_document: return "json";
    case Format::csv: return "csv";
    case Format::tsv: return "tsv";
    case Format::console: return "console";
    case Format::tensorboard: return "tensorboard";
    case Format::wandb: return "wandb";
  }
  return "unknown";
}

namespace {
// A longer "line" is not a log line (binary data, a file without newlines); it is skipped, not buffered forever.
constexpr size_t MAX_LINE_BYTES = size_t{64} << 20;
}  // namespace

class StreamReaderImpl {
 public:
  StreamReaderImpl(SourceInfo source, const ReadOptions& options, PointSink& sink, Diagnostics& diagnostics)
      : path_(source.path),
        forced_format_(options.format),
        emitter_(std::move(source), options, sink),
        context_{emitter_, diagnostics, path_, options.live} {
    if (io::is_record_format(forced_format_)) start_records(forced_format_);
    else if (forced_format_ != Format::unknown) sniffed_ = true;  // a text format was named: no binary sniffing
  }

  void feed(std::string_view bytes) {
    // A followed file or a stream written as UTF-16 (a file read by path was transcoded by its byte source already):
    // decided on the first two bytes, which may arrive one at a time.
    if (!records_ && !byte_order_known_) {
      size_t take = std::min(bytes.size(), 2 - mark_.size());
      mark_.append(bytes.substr(0, take));
      bytes.remove_prefix(take);
      if (mark_.size() < 2) return;
      end_byte_order();
    }
    if (utf16_) {
      decoded_.clear();
      utf16_->decode(bytes, decoded_);
      feed_text(decoded_);
      return;
    }
    feed_text(bytes);
  }

  void feed_text(std::string_view bytes) {
    if (records_) {
      records_->feed(bytes);
      return;
    }
    if (!sniffed_) {
      // Binary formats are recognised from their first bytes, which may arrive a few at a time when tailing.
      size_t take = std::min(bytes.size(), io::BINARY_SNIFF_BYTES - head_.size());
      head_.append(bytes.substr(0, take));
      bytes.remove_prefix(take);
      if (head_.size() < io::BINARY_SNIFF_BYTES && !io::text_so_far(head_, path_)) return;
      end_sniffing();
      if (records_) {
        records_->feed(bytes);
        return;
      }
    }
    feed_lines(bytes);
  }

  void next_file(const std::string& file) {
    if (!sniffed_) end_sniffing();
    if (records_) records_->end_file();
    if (!records_) {
      // The last line of the file before, if it had no newline, is a line of that file.
      if (!pending_.empty() && !skipping_) complete_line(pending_);
      pending_.clear();
      skipping_ = false;
      if (parser_) parser_->end_file();
      line_ = 0;  // lines are counted per file, as diagnostics name them
    }
    context_.file = file;
  }

  void finish() {
    if (!records_ && !byte_order_known_) end_byte_order();
    if (utf16_) {
      decoded_.clear();
      utf16_->finish(decoded_);
      feed_text(decoded_);
    }
    if (!sniffed_) end_sniffing();
    if (records_) {
      records_->finish();
      emitter_.meta_all("format_detail", records_->detail());
      return;
    }
    finish_lines();
  }

  Format format() const { return format_; }
  std::string detail() const {
    if (records_) return records_->detail();
    return parser_ ? parser_->detail() : format_name(format_);
  }
  uint64_t points() const { return emitter_.points(); }
  uint32_t runs() const { return emitter_.runs(); }
  uint64_t lines() const { return line_; }
  uint64_t records() const { return records_ ? records_->records() : 0; }
  bool binary() const { return binary_; }

 private:
  void start_records(Format format) {
    sniffed_ = true;
    format_ = format;
    emitter_.set_format(format_name(format_));
    records_ = format == Format::tensorboard ? io::make_tensorboard_format(context_) : io::make_wandb_format(context_);
  }

  // A UTF-16 byte-order mark starts transcoding; other first bytes are replayed as they came.
  void end_byte_order() {
    byte_order_known_ = true;
    std::string mark = std::move(mark_);
    mark_.clear();
    if (std::optional<bool> big_endian = io::utf16_byte_order(mark)) {
      utf16_.emplace(*big_endian);
    } else {
      feed_text(mark);
    }
  }

  // Decides between a binary format and text from the bytes collected so far, then replays them.
  void end_sniffing() {
    sniffed_ = true;
    std::string head = std::move(head_);
    head_.clear();
    Format binary = io::sniff_binary_format(head, path_);
    if (binary != Format::unknown) {
      start_records(binary);
      records_->feed(head);
    } else {
      feed_lines(head);
    }
  }

  void feed_lines(std::string_view bytes) {
    while (!bytes.empty()) {
      const void* nl = std::memchr(bytes.data(), '\n', bytes.size());
      if (nl == nullptr) {
        append_partial(bytes);
        return;
      }
      size_t len = static_cast<size_t>(static_cast<const char*>(nl) - bytes.data());
      if (pending_.empty() && !skipping_) {
        complete_line(bytes.substr(0, len));
      } else {
        append_partial(bytes.substr(0, len));
        if (skipping_) {
          ++line_;  // the skipped line still counts
        } else {
          complete_line(pending_);
        }
        pending_.clear();
        skipping_ = false;
      }
      bytes.remove_prefix(len + 1);
    }
  }

  void finish_lines() {
    if (!pending_.empty() && !skipping_) complete_line(pending_);
    pending_.clear();
    if (parser_) {
      parser_->finish();
      emitter_.meta_all("format_detail", parser_->detail());
    }
  }

  void append_partial(std::string_view bytes) {
    if (skipping_) return;
    if (pending_.size() + bytes.size() > MAX_LINE_BYTES) {
      context_.diagnose("line_too_long", line_ + 1, "line longer than 64 MiB; skipped");
      pending_.clear();
      skipping_ = true;
      return;
    }
    pending_.append(bytes);
  }

  // NUL, or a control character no log writes (text has tabs, CR from progress bars, ESC from colours, BS, FF, VT).
  static bool binary_text(std::string_view text) {
    for (unsigned char c : text) {
      if (c < 0x20 && c != '\t' && c != '\r' && c != '\n' && c != '\b' && c != '\f' && c != '\v' && c != 0x1b) {
        return true;
      }
    }
    return false;
  }

  void complete_line(std::string_view text) {
    ++line_;
    if (binary_) return;
    // A block of NUL bytes before a line is what a crash leaves when the file system had allocated the block but
    // not written it (or a preallocated log): skipped with a word, so the lines around it are kept. What follows
    // must then be text; otherwise (as before any record) the file is binary data.
    size_t zeros = std::min(text.find_first_not_of('\0'), text.size());
    if (zeros > 0 && !binary_text(text.substr(zeros))) {
      context_.diagnose("nul_bytes", line_,
                        std::to_string(zeros) + " NUL bytes skipped before this line (a zero-filled block)");
      text.remove_prefix(zeros);
      if (text.empty()) return;
    }
    if (!parser_) {
      if (line_ == 1 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 byte-order mark
      if (binary_text(text)) {
        binary_ = true;  // before any record: not a text log
        return;
      }
      format_ = forced_format_ != Format::unknown ? forced_format_ : io::sniff_format(text, path_);
      if (format_ == Format::unknown) return;  // blank lines before the first content
      emitter_.set_format(format_name(format_));
      switch (format_) {
        case Format::jsonl: parser_ = io::make_jsonl_format(context_); break;
        case Format::json_document: parser_ = io::make_document_format(context_); break;
        case Format::csv: parser_ = io::make_csv_format(context_, ','); break;
        case Format::tsv: parser_ = io::make_csv_format(context_, '\t'); break;
        default: parser_ = io::make_console_format(context_); break;
      }
    }
    parser_->line(text, line_);
  }

  std::string path_;
  Format forced_format_;
  io::PointEmitter emitter_;
  io::ReadContext context_;
  std::unique_ptr<io::LineFormat> parser_;
  std::unique_ptr<io::RecordFormat> records_;
  bool sniffed_ = false;  // the binary-or-text decision is made
  std::string head_;      // the first bytes, held until that decision
  bool byte_order_known_ = false;
  std::string mark_;                      // the first bytes, until a UTF-16 byte-order mark is ruled in or out
  std::optional<io::Utf16Decoder> utf16_;
  std::string decoded_;
  Format format_ = Format::unknown;
  std::string pending_;
  bool skipping_ = false;
  bool binary_ = false;
  uint64_t line_ = 0;
};

StreamReader::StreamReader(SourceInfo source, const ReadOptions& options, PointSink& sink, Diagnostics& diagnostics)
    : impl_(std::make_unique<StreamReaderImpl>(std::move(source), options, sink, diagnostics)) {}
StreamReader::~StreamReader() = default;
void StreamReader::feed(std::string_view bytes) { impl_->feed(bytes); }
void StreamReader::next_file(const std::string& file) { impl_->next_file(file); }
void StreamReader::finish() { impl_->finish(); }
Format StreamReader::format() const { return impl_->format(); }
std::string StreamReader::format_detail() const { return impl_->detail(); }
uint64_t StreamReader::points() const { return impl_->points(); }
uint32_t StreamReader::runs() const { return impl_->runs(); }
uint64_t StreamReader::lines() const { return impl_->lines(); }
uint64_t StreamReader::records() const { return impl_->records(); }
bool StreamReader::binary() const { return impl_->binary(); }

}  // namespace rldk
