#include "act/action_queue.h"

#include <algorithm>

namespace rldk::act {

bool Cancel::sleep_for(std::chrono::duration<double> d) const {
  auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(d);
  std::unique_lock<std::mutex> lock(mutex_);
  // Woken by set_deadline(), so a backoff sleep never outlasts the shutdown deadline.
  changed_.wait_until(lock, std::min(until, deadline()), [&] { return cancelled(); });
  return !cancelled();
}

void Cancel::set_deadline(Clock::time_point t) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    deadline_.store(t.time_since_epoch().count());
  }
  changed_.notify_all();
}

ActionQueue::ActionQueue(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

ActionQueue::~ActionQueue() { close(Clock::now()); }

void ActionQueue::push(Job job, Discarded on_discard) {
  std::optional<Entry> dropped;
  const char* why = "dropped";
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) {
      ++counts_.abandoned;
      why = "abandoned";
      dropped = Entry{std::move(job), std::move(on_discard)};
    } else {
      if (queue_.size() >= capacity_) {
        dropped = std::move(queue_.front());
        queue_.pop_front();
        ++counts_.dropped;
      }
      queue_.push_back(Entry{std::move(job), std::move(on_discard)});
      if (!worker_.joinable()) worker_ = std::thread([this] { run(); });
    }
  }
  wake_.notify_one();
  if (dropped && dropped->on_discard) dropped->on_discard(why);
}

void ActionQueue::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return closing_ || !queue_.empty(); });
    if (!queue_.empty() && cancel_.cancelled()) {
      std::deque<Entry> left = std::move(queue_);
      queue_.clear();
      counts_.abandoned += left.size();
      idle_.notify_all();
      lock.unlock();
      for (auto& e : left) {
        if (e.on_discard) e.on_discard("abandoned");
      }
      return;
    }
    if (queue_.empty()) {
      idle_.notify_all();
      if (closing_) return;
      continue;
    }
    Entry e = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    e.job(cancel_);
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

bool ActionQueue::drain(Clock::time_point until) {
  std::unique_lock<std::mutex> lock(mutex_);
  return idle_.wait_until(lock, until, [&] { return queue_.empty() && !busy_; });
}

void ActionQueue::close(Clock::time_point deadline) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_ && !worker_.joinable()) return;
    closing_ = true;
  }
  cancel_.set_deadline(deadline);
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

QueueCounts ActionQueue::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

}  // namespace rldk::act
