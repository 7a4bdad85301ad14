// XXH3-128 through libxxhash (Debian's libxxhash-dev): the streaming state lives behind a pointer so the public
// header does not pull in xxhash.h.
#include <xxhash.h>
#if defined(__x86_64__)
// The library is built for baseline x86-64 (SSE2) and also exports kernels chosen at run time (AVX2, AVX-512);
// this header maps XXH3_128bits* onto them. On an AVX2 machine that is about 1.5x the SSE2 speed.
#include <xxh_x86dispatch.h>
#endif

#include <cstdio>

#include "rldk/provenance.h"

namespace rldk::provenance {

struct ContentHasher::State {
  XXH3_state_t* xxh = nullptr;
  State() : xxh(XXH3_createState()) {
    if (xxh == nullptr) throw std::bad_alloc();
    XXH3_128bits_reset(xxh);
  }
  ~State() { XXH3_freeState(xxh); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

std::string ContentHash::hex() const {
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return text;
}

std::string ContentHash::text() const { return HASH_PREFIX + hex(); }

ContentHasher::ContentHasher() : state_(std::make_unique<State>()) {}
ContentHasher::~ContentHasher() = default;
ContentHasher::ContentHasher(ContentHasher&&) noexcept = default;
ContentHasher& ContentHasher::operator=(ContentHasher&&) noexcept = default;

void ContentHasher::update(const void* data, size_t size) {
  if (size == 0) return;
  XXH3_128bits_update(state_->xxh, data, size);
  bytes_ += size;
}

ContentHash ContentHasher::digest() const {
  XXH128_hash_t h = XXH3_128bits_digest(state_->xxh);
  return {h.high64, h.low64};
}

ContentHash hash_bytes(const void* data, size_t size) {
  XXH128_hash_t h = XXH3_128bits(data, size);
  return {h.high64, h.low64};
}

}  // namespace rldk::provenance
