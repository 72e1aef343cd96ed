#include "nicsim/sim/engine.h"

namespace nicsim::sim {

void Engine::Wakeup::set(std::optional<Time> at) {
  if (!at) {
    if (armed_) {
      armed_ = false;
      ++generation_;  // the queued entry becomes stale
    }
    return;
  }
  const Time t = *at < engine_->now_ ? engine_->now_ : *at;
  if (armed_ && t == at_) {
    return;
  }
  armed_ = true;
  at_ = t;
  ++generation_;
  engine_->heap_.push(Entry{t, engine_->seq_++, p_, tag_, generation_, this});
  ++engine_->stats_.scheduled;
}

void Engine::dispatch(const Entry& e) {
  if (e.wakeup != nullptr) {
    if (!e.wakeup->armed_ || e.generation != e.wakeup->generation_) {
      ++stats_.stale;
      return;
    }
    e.wakeup->armed_ = false;
  }
  ++stats_.executed;
  e.process->on_event(e.at, e.tag);
}

bool Engine::step(Time until) {
  if (heap_.empty() || heap_.top().at > until) {
    return false;
  }
  const Entry e = heap_.top();
  heap_.pop();
  now_ = e.at;
  dispatch(e);
  return true;
}

void Engine::run_until(Time until) {
  while (step(until)) {
  }
  if (until > now_ && until != Time::max()) {
    now_ = until;
  }
}

std::optional<Time> Engine::next_time() const {
  return heap_.empty() ? std::nullopt : std::optional<Time>(heap_.top().at);
}

}  // namespace nicsim::sim
