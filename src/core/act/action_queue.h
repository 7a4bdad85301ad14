// A bounded queue of slow actions (webhooks, shell commands) with its own worker thread, so a slow or silent
// endpoint can never hold up rule evaluation, other kinds of actions, or the monitor's exit.
//
// - Bounded: when `capacity` jobs wait, the oldest waiting job is dropped to make room (the newest alert is the one
//   a person needs to see; an old one is already stale). Drops are counted and reported to the job.
// - Deadline at shutdown: close(deadline) lets the worker keep delivering until `deadline`, then cancels the job in
//   flight (jobs poll their Cancel token, and cut network waits at Cancel::deadline()) and abandons the rest.
//   close() returns once the worker has stopped, which the jobs' cooperation bounds to the deadline plus one poll.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace rldk::act {

using Clock = std::chrono::steady_clock;

// What a running job checks to know it must give up: shutdown reached its deadline.
class Cancel {
 public:
  bool cancelled() const { return Clock::now() >= deadline(); }
  // The time the job must be done by (far future while the queue is open).
  Clock::time_point deadline() const { return Clock::time_point(Clock::duration(deadline_.load())); }
  // Sleeps up to `d`, waking early at the deadline; false when cancelled.
  bool sleep_for(std::chrono::duration<double> d) const;
  void set_deadline(Clock::time_point t);

 private:
  std::atomic<Clock::rep> deadline_{Clock::time_point::max().time_since_epoch().count()};
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
};

struct QueueCounts {
  uint64_t dropped = 0;    // pushed out by newer jobs while the queue was full
  uint64_t abandoned = 0;  // still waiting when the shutdown deadline came
};

class ActionQueue {
 public:
  // Runs a job; it must return soon after cancel.cancelled() becomes true.
  using Job = std::function<void(const Cancel& cancel)>;
  // Called (on the thread that drops or abandons) for a job that will never run: why ("dropped", "abandoned").
  using Discarded = std::function<void(const char* why)>;

  explicit ActionQueue(size_t capacity);
  ~ActionQueue();  // close(now): nothing waits
  ActionQueue(const ActionQueue&) = delete;
  ActionQueue& operator=(const ActionQueue&) = delete;

  void push(Job job, Discarded on_discard);
  // Waits until every job pushed so far has run, or until `until` (jobs are not cancelled); true when idle.
  bool drain(Clock::time_point until);
  // Stops accepting work; delivers until `deadline`, then cancels and abandons what is left; joins the worker.
  void close(Clock::time_point deadline);
  // Moves the deadline to now: the job in flight is cut, waiting ones are abandoned (a second Ctrl-C at shutdown).
  void cut() { cancel_.set_deadline(Clock::now()); }
  QueueCounts counts() const;

 private:
  struct Entry {
    Job job;
    Discarded on_discard;
  };
  void run();

  size_t capacity_;
  Cancel cancel_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<Entry> queue_;
  bool busy_ = false;
  bool closing_ = false;
  QueueCounts counts_;
  std::thread worker_;
};

}  // namespace rldk::act
