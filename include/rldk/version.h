#pragma once

namespace rldk {
inline constexpr const char* VERSION = "0.1.0";
}
