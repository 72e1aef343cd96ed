#pragma once
// RouterNode — a model::Router as a node of the simulated network: one Engine process whose
// wake-up is the router's next event. It adds each forwarded packet's completed hop to the
// per-path stage times (RouterObserver::on_forward).

#include <memory>
#include <string>

#include "nicsim/model/router.h"
#include "nicsim/sim/node.h"
#include "nicsim/sim/sim_context.h"

namespace nicsim::sim {

class RouterNode final : public Node, public model::RouterObserver {
 public:
  RouterNode(SimContext& ctx, std::string name, std::unique_ptr<model::Router> router)
      : Node(ctx.engine), ctx_(ctx), name_(std::move(name)), router_(std::move(router)) {
    router_->set_observer(this);
  }

  void reschedule() override {
    const std::optional<Time> t = router_->next_event();
    set_wakeup(t && *t <= ctx_.end ? t : std::nullopt);
  }
  void on_event(Time now, uint64_t /*tag*/) override {
    note_wires();
    router_->advance(now);
    reschedule();
    wake_peers();
  }
  void on_forward(Time now, const Packet& p, int /*in*/, int /*out*/) override {
    if (p.meta != 0) {
      ctx_.stages.hop(p, ctx_.direction_of(ctx_.meta.get(p.meta)), now);
    }
  }

  const std::string& name() const { return name_; }
  model::Router& router() { return *router_; }
  const model::Router& router() const { return *router_; }

 private:
  SimContext& ctx_;
  std::string name_;
  std::unique_ptr<model::Router> router_;
};

}  // namespace nicsim::sim
