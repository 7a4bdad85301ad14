#include "io/server_follower.h"

#include <utility>

namespace rldk::io {

ServerFollower::ServerFollower(std::unique_ptr<ServerPoller> poller, double interval_seconds)
    : poller_(std::move(poller)), thread_([this, interval_seconds] { loop(interval_seconds); }) {}

ServerFollower::~ServerFollower() {
  cancel_.set_deadline(act::Clock::now());
  if (thread_.joinable()) thread_.join();
}

void ServerFollower::loop(double interval_seconds) {
  bool failing = false;
  auto last_report = act::Clock::now();
  while (!cancel_.cancelled()) {
    auto pass = poller_->poll(cancel_);
    if (cancel_.cancelled()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (pass.ok()) {
        if (failing) problems_.push_back("the tracking server answers again");
        failing = false;
        lines_ += pass->lines;
        if (pass->finished) {
          finished_ = true;
          return;
        }
      } else if (!failing || act::Clock::now() - last_report > std::chrono::minutes(1)) {
        problems_.push_back(to_string(pass.error()) + (failing ? " (still)" : "; retrying"));
        failing = true;
        last_report = act::Clock::now();
      }
    }
    cancel_.sleep_for(std::chrono::duration<double>(interval_seconds));
  }
}

std::string ServerFollower::take_lines() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(lines_, {});
}

std::vector<std::string> ServerFollower::take_problems() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(problems_, {});
}

bool ServerFollower::ended() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return finished_ && lines_.empty();
}

}  // namespace rldk::io
