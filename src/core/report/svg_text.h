// Small text helpers shared by the SVG drawings (bars, graphs): coordinates and labels cut to fit.
#pragma once

#include <cstdio>
#include <string>

namespace rldk::svg {

// A coordinate with one decimal: enough for screen pixels, short in the file.
inline std::string coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// `text` cut to `max_bytes` with an ellipsis, never inside a UTF-8 sequence.
inline std::string clip_label(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes || max_bytes == 0) return text;
  size_t cut = max_bytes - 1;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "\u2026";
}

}  // namespace rldk::svg
