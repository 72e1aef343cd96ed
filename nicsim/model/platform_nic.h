#pragma once
// PlatformNic — a PCIe or SoC-MAC Ethernet NIC together with its Linux driver and the stack's
// transmit path above it: qdisc → (bulk) dequeue → driver TX ring with BQL and doorbell → DMA
// engine → wire; wire → RX ring → interrupt coalescing → NAPI poll → stack. Implements the Nic
// contract (nicsim/model/nic.h); the qdisc is built by the config layer and handed in.
//
// Reference: behaviour follows Linux net/core/dev.c (__dev_xmit_skb, dev_hard_start_xmit,
// xmit_one, napi), net/sched/sch_generic.c (__qdisc_run, qdisc_restart, dequeue_skb,
// try_bulk_dequeue_skb, sch_direct_xmit, dev_requeue_skb), include/linux/netdevice.h (BQL
// hooks, xmit_more) and drivers/net/ethernet/stmicro/stmmac/stmmac_main.c, as described in
// docs/mechanisms §2.6–§2.7 (driver contract, where bytes wait), §3 (xmit_more, BQL-bounded
// bulk dequeue, doorbell deferral), §7 (ethtool -C, NAPI budget 64, dev_tx_weight 64, stmmac
// mitigation by era), §9.4 and §10 (TCQ_F_CAN_BYPASS), §11 (checklist).
//
// Transmit, step by step:
//  1. send(p, now): qdisc bypass if enabled, the qdisc and its requeue slot are empty and the
//     queue is not stopped (§10); else enqueue, then a qdisc run (__qdisc_run).
//  2. A qdisc run loops while the queue is not stopped (DRV_XOFF or STACK_XOFF): take the
//     requeue slot's head (one packet, no bulk) or dequeue a packet and, with bulk_dequeue,
//     more packets while bytelimit = bql_avail − first_len stays > 0 (§3.2); a GSO packet on a
//     NIC without TSO is segmented in software here (validate_xmit_skb). The list goes to the
//     driver with xmit_more on all but its last packet; if the driver stops the queue (DRV_XOFF
//     only, netif_tx_queue_stopped — 4.20+) while packets remain, the rest is requeued. After
//     dev_tx_weight packets the run yields and continues as a NET_TX softirq job.
//  3. Driver xmit (per frame, on the CPU): per_tx_frame (+ per_gso_segment for a software
//     segment), post descs_per_frame descriptors (Stage::kRingIn), stmmac IC/timer logic, stop
//     the queue when free descriptors <= tx_stop_free, Doorbell::on_sent → kick: per_kick on
//     the CPU, the DMA engine sees the frames doorbell_latency later.
//  4. DMA engine: transmits visible frames in ring order, one at a time, when the wire is free
//     (so a PAUSE holds it); a TSO super-packet goes out as gso_segs frames. A descriptor
//     completes at the last bit of its (last) frame.
//  5. Completion per tx_completion: `irq` — every completion feeds an IrqCoalescer (tx-usecs,
//     tx-frames); `stmmac_2014` / `stmmac_modern` — only descriptors with the IC bit raise an
//     interrupt, plus the driver's software timer (see below). The interrupt schedules NAPI
//     (per_interrupt), the poll (per_poll) cleans TX: per_tx_clean per ring entry, descriptors
//     freed, Doorbell::on_completed once per pass, wake when free > tx_wake_free, a qdisc run if
//     the queue was woken or the qdisc has backlog, then NicSink::tx_released per entry (TSQ).
//
// stmmac mitigation (§7.3):
//  - stmmac_2014: per xmit tx_count_frames += descriptors; below tx_coal_frames the timer is
//    (re-)armed to now + tx_coal_timer (mod_timer pushes it out on every xmit), else the count
//    is reset and the descriptor gets IC. The timer cleans TX directly (stmmac_tx_timer →
//    stmmac_tx_clean, timer softirq, not NAPI).
//  - stmmac_modern (hrtimer era, 2023+ arm rule): per xmit tx_count_frames += descriptors; IC if
//    tx_coal_frames > 0 and (descriptors > tx_coal_frames or (count mod tx_coal_frames) <
//    descriptors), then count = 0; otherwise the timer is armed — decided from the source:
//    hrtimer_start restarts (pushes out) a pending timer on every such xmit, unless the TX NAPI
//    is scheduled, in which case the timer is cancelled (stmmac_tx_timer_arm, "Arm timer only if
//    napi is not already scheduled", 2023). After a TX poll the timer is armed again if
//    descriptors are still pending. Expiry schedules the TX NAPI. tx_coal_timer = 0 disables it.
//
// Receive: frames are taken from the incoming wire at their arrival time; a frame finding no
// free RX descriptor is dropped (rx_missed). Each admitted frame feeds the RX IrqCoalescer
// (rx-usecs/rx-frames; stmmac's riwt is expressed as rx-usecs); the interrupt is masked while
// NAPI polls. A poll costs per_poll and, per frame, per_rx_frame + copy(len); each frame is
// delivered (Stage::kRxDeliver) when the CPU finishes it and its descriptor is then refilled.
// After napi_budget frames the poll is repeated, otherwise NAPI completes and the interrupt is
// unmasked. With clean_tx_in_rx_poll one NAPI context serves both directions (igb/ixgbe, 2014
// stmmac): RX interrupts also clean TX. Otherwise TX has its own NAPI context (stmmac since 5.x).
//
// Receive batching beyond fixed coalescing (docs/rx-batching.md; Linux net/core/dev.c
// napi_complete_done, napi_watchdog, napi_busy_loop, busy_poll_stop, ____napi_schedule (a
// threaded NAPI wakes napi->thread); drivers/net/ethernet/intel/{igb,ixgbe}):
//  - napi_defer_hard_irqs + gro_flush_timeout: a completion after work reloads the defer count;
//    while it lasts (and a timeout is set) the IRQ stays masked and the hrtimer polls again;
//    with a timeout GRO flushes only packets older than the current jiffy.
//  - threaded: every NAPI schedule (IRQ or timer) also pays threaded_wakeup on the core.
//  - busy_read: the application spins after each send and each delivery; a frame landing while
//    it spins and the NAPI is free is polled by it (per_poll, no IRQ, busy_poll_budget frames),
//    then busy_poll_stop polls once more and completes as usual; an IRQ meanwhile costs its
//    handler and is MISSED. prefer_busy_poll + both defer keys: busy_poll_stop arms the timer
//    and keeps the IRQ masked. Spin time is added to the Cpu's busy time, delaying no job.
//  - itr: algo::IntelItr after each completion that re-enables the IRQ (igb_poll/ixgbe_poll);
//    the interval reprograms the RX coalescer (and TX with clean_tx_in_rx_poll).
//
// All work runs on the host's Cpu (a serial server): a slow CPU delays RX processing until the
// ring overflows. State changes of a CPU job are applied when the job is issued for the qdisc
// run / driver xmit (their hardware effects — the doorbell — happen at the job's end); NAPI
// work (TX clean, each RX frame) takes effect when the job ends.
//
// Units: bytes are Packet::len (skb->len). A GSO packet's len is the sum of its segments'
// lengths (qdisc_pkt_len); its first gso_segs−1 segments have ceil(len/gso_segs) bytes and the
// last the remainder (floor if that would leave the last one empty); segments keep the
// packet's id. No clock is read: all times are arguments.
//
// Deviations (docs/models/platform_nic.md): one TX queue (no mq); a TSO super-packet uses
// descs_per_frame descriptors and BQL counts its len (the kernel counts skb->len, header once);
// the bypass path is taken only when the queue is not stopped (the kernel would requeue the
// packet); requeued packets are re-sent one per list, as dequeue_skb does; TX clean does not
// consume NAPI budget; netdev_budget (300) / ksoftirqd and the RX page pool are not modelled
// (GRO, DIM, Intel ITR, deferred IRQs, threaded NAPI and busy polling: docs/rx-batching.md); stmmac
// timers are exact (no jiffies rounding); a timer expiry costs per_interrupt; the doorbell's CPU
// cost is CpuCosts::per_kick + Doorbell::Params::kick_cost.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/algo/doorbell.h"
#include "nicsim/algo/gro.h"
#include "nicsim/algo/intel_itr.h"
#include "nicsim/algo/irq_coalescer.h"
#include "nicsim/algo/net_dim.h"
#include "nicsim/core/element.h"
#include "nicsim/core/gso.h"
#include "nicsim/core/observer.h"
#include "nicsim/core/packet.h"
#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"
#include "nicsim/core/time.h"
#include "nicsim/model/agenda.h"
#include "nicsim/model/cpu.h"
#include "nicsim/model/nic.h"
#include "nicsim/model/wire.h"

namespace nicsim::model {

// How TX completions reach the driver (docs/mechanisms §7.1, §7.3).
enum class TxCompletion : uint8_t {
  kIrq,           // "irq": completion interrupts moderated by tx-usecs / tx-frames
  kStmmac2014,    // "stmmac_2014": IC bit every tx_coal_frames, 40 ms timer pushed out per xmit
  kStmmacModern,  // "stmmac_modern": IC rule (count mod frames) < descs, hrtimer, TX NAPI
};
// Scenario-file names: "irq", "stmmac_2014", "stmmac_modern".
const char* to_string(TxCompletion mode);
std::optional<TxCompletion> tx_completion_from_string(std::string_view name);

// RX interrupt moderation policy (ethtool -C rx-usecs on igb/ixgbe, docs/rx-batching.md).
enum class ItrMode : uint8_t {
  kFixed,            // "fixed": rx_coalesce / tx_coalesce as given
  kIgb,              // "igb": igb dynamic ITR (rx-usecs 1), algo::IntelItr
  kIgbConservative,  // "igb_conservative": igb's default (rx-usecs 3: never lowest_latency)
  kIxgbe,            // "ixgbe": ixgbe_update_itr (rx-usecs 1, ixgbe's default)
};
const char* to_string(ItrMode mode);

class PlatformNic final : public Nic {
 public:
  struct Params {
    // ---- TX ring and driver ----
    // Descriptors in the TX ring. 256: stmmac's dma_txsize default of the 2014 seed era
    // (§1, §7.3; current stmmac DMA_DEFAULT_TX_SIZE is 512) and igb's default TX ring.
    int64_t tx_ring_size = 256;
    // Descriptors one frame (or TSO super-packet) occupies: nfrags + 1; 1 for a linear skb.
    int64_t descs_per_frame = 1;
    // Stop the queue (netif_tx_stop_queue, DRV_XOFF) when free descriptors <= this after a
    // post. stmmac: MAX_SKB_FRAGS + 1 = 18 (§2.6).
    int64_t tx_stop_free = 18;
    // Wake the queue from TX clean when free descriptors > this. stmmac: STMMAC_TX_THRESH =
    // ring / 4 = 64 for a 256-descriptor ring (§2.6).
    int64_t tx_wake_free = 64;
    // The NIC segments GSO super-packets in hardware (one ndo_start_xmit, descs_per_frame
    // descriptors). Without TSO the stack segments them first (software GSO, §3.1). Off: the
    // 2014 stmmac had no TSO.
    bool tso = false;
    // BQL (Dql) on/off and limits, and whether the driver defers its doorbell on xmit_more.
    algo::Doorbell::Params doorbell{};
    // Time from the doorbell MMIO write until the DMA engine starts on the new descriptors.
    // ~1 µs: a posted PCIe write plus the descriptor fetch round trip (order of magnitude;
    // §3.4 calls the MMIO itself "sub-microsecond"). Presets set the device's value.
    Duration doorbell_latency = Duration::us(1);
    // TCQ_F_CAN_BYPASS: an empty qdisc is bypassed (§9.4, §10). pfifo_fast and fq_codel set
    // it; TBF and HTB do not (the config layer sets this from the qdisc kind).
    bool qdisc_bypass = true;
    // __qdisc_run quota before yielding to the NET_TX softirq: dev_tx_weight = 64 (§7.2).
    int64_t dev_tx_weight = 64;
    // Bulk dequeue bounded by BQL avail (§3.2; TCQ_F_ONETXQUEUE on a single-queue device).
    bool bulk_dequeue = true;

    // ---- TX completion ----
    TxCompletion tx_completion = TxCompletion::kIrq;
    // tx-usecs / tx-frames for tx_completion = irq. Default: no coalescing (ethtool's
    // usecs = 0, frames = 1, §7.1).
    algo::IrqCoalescer::Params tx_coalesce{};
    // stmmac tx_coal_frames: STMMAC_TX_FRAMES = 64 in 2014 (25 since ~2019) (§7.3).
    int64_t tx_coal_frames = 64;
    // stmmac tx_coal_timer: STMMAC_COAL_TX_TIMER = 40 ms in 2014; 1 ms (~2019), 5 ms (2023)
    // (§7.3). 0 disables the timer (stmmac_modern only).
    Duration tx_coal_timer = Duration::ms(40);
    // One NAPI context for RX and TX: the poll cleans TX too, so RX interrupts (incoming ACKs)
    // complete TX. True for igb/ixgbe queue vectors and the 2014 stmmac (stmmac_poll cleaned TX
    // then RX); false for stmmac since it got separate rx/tx NAPI.
    bool clean_tx_in_rx_poll = true;

    // ---- RX ----
    // Descriptors in the RX ring. 256: stmmac dma_rxsize of 2014 (§7.3).
    int64_t rx_ring_size = 256;
    // rx-usecs / rx-frames (stmmac riwt as rx-usecs, rx_coal_frames 0). Default: none.
    algo::IrqCoalescer::Params rx_coalesce{};
    // NAPI poll budget: NAPI_POLL_WEIGHT = 64 (§7.2).
    int64_t napi_budget = 64;
    // GRO (ethtool -K gro on, napi_gro_receive): frames of one poll merge into packets that
    // pay the stack's per_rx_packet once (docs/rx-batching.md). Off by default, so existing
    // scenarios keep their results; Linux drivers enable it by default.
    bool gro = false;
    // gro_max_size (ip link set ... gro_max_size): a merged IPv4 packet stays below it. 65536 =
    // GRO_LEGACY_MAX_SIZE, also the largest value IPv4 accepts without BIG TCP.
    int64_t gro_max_size = 65536;
    // ethtool -C adaptive-rx on: net_dim (algo::NetDim, RX profiles, EQE mode) picks the RX
    // moderation from its profile table, starting at the default profile (8 us, 256 frames);
    // rx_coalesce is then only the validated fallback. Off: rx_coalesce is fixed.
    bool adaptive_rx = false;
    // Intel adaptive ITR (algo::IntelItr): after each completed poll the vector's interval is
    // recomputed and applied to the RX coalescer (and to TX with clean_tx_in_rx_poll: one
    // vector, one EITR). kFixed: rx_coalesce as given. Exclusive with adaptive_rx.
    ItrMode itr = ItrMode::kFixed;
    // The link speed the ITR heuristics see (adapter->link_speed); the config layer sets it
    // from the NIC's max_link_rate.
    int64_t itr_link_mbps = 1000;

    // ---- NAPI deferral, threaded NAPI, busy polling (net/core/dev.c) ----
    // /sys/class/net/X/napi_defer_hard_irqs: completed polls that keep the IRQ masked and
    // re-poll from the gro_flush_timeout hrtimer instead (napi_complete_done). 0: off.
    int64_t napi_defer_hard_irqs = 0;
    // /sys/class/net/X/gro_flush_timeout: the hrtimer napi_complete_done arms; also holds GRO
    // packets of the current jiffy across polls. 0: off.
    Duration gro_flush_timeout = Duration::zero();
    // /sys/class/net/X/threaded: the poll runs in a kthread; every NAPI schedule wakes it
    // (wake_up_process + a context switch), costing threaded_wakeup on the core.
    bool threaded = false;
    // Wakeup + context switch into the NAPI kthread: ~2 us on x86 (order of magnitude of
    // lmbench lat_ctx / perf bench sched pipe figures; model estimate, not measured here).
    Duration threaded_wakeup = Duration::us(2);
    // SO_BUSY_POLL / net.core.busy_read (net.core.busy_poll for poll/epoll): the receiving
    // application spins up to this long on the queue's NAPI when its socket is empty. 0: off.
    Duration busy_read = Duration::zero();
    // SO_PREFER_BUSY_POLL: with napi_defer_hard_irqs and gro_flush_timeout, busy_poll_stop
    // keeps the IRQ masked and arms the timer instead (the app polls, not the IRQ).
    bool prefer_busy_poll = false;
    // SO_BUSY_POLL_BUDGET: BUSY_POLL_BUDGET = 8 frames per napi_busy_loop poll.
    int64_t busy_poll_budget = 8;

    Validation validate() const;
  };

  // Monotonic counters. Identities (asserted in tests):
  //   sent_packets == bypassed_packets + qdisc.enqueued_packets
  //   sent_bytes == qdisc.dropped_bytes + qdisc backlog bytes + requeued_bytes()
  //                 + tx_unsent_bytes() + tx_bytes
  //   rx_arrived == rx_delivered + rx_missed + rx_ring_frames()
  //   tx_completions == tx_cleaned + (completed, not yet cleaned ring entries)
  struct Stats {
    // Stack and qdisc.
    uint64_t sent_packets = 0;  // send() calls (a GSO packet counts once)
    uint64_t sent_bytes = 0;
    uint64_t bypassed_packets = 0;   // TCQ_F_CAN_BYPASS: straight to the driver
    uint64_t qdisc_runs = 0;         // __qdisc_run invocations
    uint64_t qdisc_reschedules = 0;  // dev_tx_weight used up: continued as NET_TX softirq
    uint64_t qdisc_watchdogs = 0;    // runs started by a throttled qdisc's next_ready
    uint64_t bulk_dequeues = 0;      // dequeues that handed over more than one packet (§3.2)
    uint64_t bulk_extra_packets = 0;
    uint64_t gso_segmented = 0;  // GSO packets segmented in software (no TSO)
    uint64_t gso_segments = 0;   // segments they produced
    uint64_t requeues = 0;       // packets put back by dev_requeue_skb
    // Driver TX.
    uint64_t xmits = 0;          // ndo_start_xmit calls
    uint64_t xmit_more = 0;      // ... with xmit_more set
    uint64_t tx_busy = 0;        // NETDEV_TX_BUSY: no room for a frame (should stay 0)
    uint64_t kicks = 0;          // doorbell writes
    uint64_t batched_kicks = 0;  // doorbell writes covering more than one xmit
    uint64_t largest_kick_batch = 0;
    uint64_t ring_stops = 0;      // DRV_XOFF set: ring nearly full
    uint64_t ring_wakes = 0;      // DRV_XOFF cleared: free > tx_wake_free
    uint64_t bql_stops = 0;       // STACK_XOFF set: BQL limit reached
    uint64_t bql_wakes = 0;       // STACK_XOFF cleared by a completion
    uint64_t ic_descriptors = 0;  // stmmac: descriptors posted with the IC bit
    // Hardware TX.
    uint64_t tx_frames = 0;  // frames put on the wire (TSO segments counted)
    uint64_t tx_bytes = 0;
    uint64_t tx_completions = 0;  // ring entries the hardware completed
    // TX completion processing.
    uint64_t tx_irqs = 0;          // TX interrupts (coalesced or IC)
    uint64_t tx_timer_fires = 0;   // stmmac software timer expiries
    uint64_t tx_clean_passes = 0;  // clean passes that freed at least one entry
    uint64_t tx_cleaned = 0;       // ring entries cleaned (completions / pass = ratio)
    uint64_t max_tx_clean_batch = 0;
    // RX.
    uint64_t rx_arrived = 0;  // frames popped from the incoming wire
    uint64_t rx_missed = 0;   // dropped: no free RX descriptor (rx_missed / overflow)
    uint64_t rx_delivered = 0;
    uint64_t rx_bytes = 0;
    uint64_t rx_irqs = 0;
    uint64_t polls = 0;             // NAPI poll invocations (both contexts)
    uint64_t budget_exhausted = 0;  // polls that used the whole napi_budget
    uint64_t max_rx_ring = 0;       // RX ring occupancy high water
    // GRO (gro on): packets handed to the stack (merged or alone) and the CPU time charged
    // for receiving (per_rx_frame share + copy per frame, per_rx_packet per packet).
    uint64_t rx_stack_packets = 0;
    uint64_t dim_changes = 0;  // adaptive_rx: profiles applied
    uint64_t itr_changes = 0;  // itr: interval changes applied
    // NAPI deferral / busy polling.
    uint64_t napi_timer_fires = 0;      // gro_flush_timeout hrtimer expiries (napi_watchdog)
    uint64_t napi_timer_polls = 0;      // ... that scheduled a poll
    uint64_t deferred_completions = 0;  // napi_complete_done that kept the IRQ masked
    uint64_t threaded_wakeups = 0;      // threaded: NAPI kthread wakeups
    uint64_t busy_poll_sessions = 0;    // napi_busy_loop sessions that polled the queue
    uint64_t busy_poll_frames = 0;      // frames received by the application's polls
    uint64_t busy_poll_irqs = 0;        // IRQs that found the NAPI owned by the busy poller
    Duration busy_spin;                 // time the application spun (counted as CPU busy)
    Duration rx_cpu;  // receive work on the CPU (with GRO or without), excluding IRQ/poll
    // BQL.
    uint64_t bql_limit_high_water = 0;
  };

  PlatformNic(const Params& params, AnyQueue qdisc, const CpuCosts& costs);

  // Nic contract.
  void attach(Wire* out, Wire* in, Cpu* cpu, NicSink* sink) override;
  Verdict send(Packet&& p, Time now) override;
  std::optional<Time> next_event() const override;
  void advance(Time now) override;
  NicCounters counters() const override;
  NicQueueSample queue_sample() const override;
  std::string describe() const override;
  AnyQueue* qdisc_queue() override { return &qdisc_; }

  // A frame the MAC steered to this NIC's RX ring at `now`, for a queue pair of a multi-queue
  // NIC (MultiQueueNic: RSS picks the queue), which attaches it with `in` = nullptr and hands
  // each received frame in here instead of letting it read the wire.
  void receive(Packet&& frame, Time now);

  // RX ring drops are reported here (DropReason::kRingFull); the qdisc has its own observer.
  void set_observer(Observer* o) {
    observer_ = o;
    qdisc_drops_.set_user(o);
  }

  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  const algo::Gro& gro() const { return gro_; }
  const algo::NetDim& rx_dim() const { return rx_dim_; }
  const algo::IntelItr& intel_itr() const { return itr_; }
  const algo::Doorbell& doorbell() const { return doorbell_; }
  const AnyQueue& qdisc() const { return qdisc_; }
  AnyQueue& qdisc() { return qdisc_; }

  // Occupancy.
  bool tx_queue_stopped() const { return doorbell_.stopped(); }
  uint64_t tx_ring_entries() const { return tx_posted_ - tx_cleaned_; }  // posted, not cleaned
  int64_t tx_free_descs() const { return tx_free_descs_; }
  uint64_t tx_unsent_bytes() const { return tx_unsent_bytes_; }  // in the ring, not yet sent
  uint64_t requeued_packets() const { return requeue_.size(); }
  uint64_t requeued_bytes() const { return requeue_bytes_; }
  uint64_t rx_ring_frames() const { return rx_ring_.size(); }

 private:
  enum class ActionKind : uint8_t {
    kDoorbell,     // value = ring entries the DMA engine may now see
    kTxEngine,     // retry starting a frame (the wire was paused)
    kTxDone,       // last bit of the frame on the wire
    kNapiPoll,     // ctx: a poll invocation starts
    kNapiRx,       // ctx: per_poll done, look at the RX ring
    kTxCleanDone,  // ctx (or kNoCtx: 2014 timer), value = entries cleaned
    kRxFrameDone,  // ctx: the CPU finished the RX ring's head frame
    kQdiscRun,     // NET_TX softirq
    kGroDeliver,   // ctx: the stack finished GRO's completed packets; value 1: poll ending
  };
  // Who owns a NAPI context between schedule and completion (net/core/dev.c).
  enum class Owner : uint8_t {
    kSoftirq,   // an IRQ or the NAPI timer scheduled it (NET_RX softirq or the kthread)
    kBusyLoop,  // napi_busy_loop: the application polls (NAPI_STATE_IN_BUSY_POLL)
    kBusyStop,  // busy_poll_stop's last napi->poll
  };
  struct Action {
    ActionKind kind;
    uint8_t ctx;
    uint64_t value;
  };
  enum class IrqCause : uint8_t { kRx, kTx, kTimer };
  static constexpr uint8_t kNoCtx = 0xff;
  static constexpr Time kNever = Time::max();  // "no such event" for the cached times

  struct TxSlot {
    Packet frame;       // the frame (TSO: super-packet) until its last bit is handed out
    TxRelease release;  // what the socket gets back; release.bytes is also what BQL counts
    uint32_t descs = 0;
    uint16_t segs = 1;  // wire frames (TSO: gso_segs)
    uint16_t segs_sent = 0;
    bool ic = false;
  };
  struct XmitEntry {
    Packet p;
    bool last_segment = true;  // last frame of a software-segmented GSO packet
    bool sw_segment = false;   // produced by software GSO (costs per_gso_segment)
  };
  // A small growable FIFO of XmitEntry (the requeue slot, q->gso_skb).
  class EntryFifo {
   public:
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    void push_back(XmitEntry&& e);
    XmitEntry pop_front();

   private:
    std::vector<XmitEntry> slots_;
    size_t head_ = 0;
    size_t size_ = 0;
  };
  struct Napi {
    bool scheduled = false;  // NAPI_STATE_SCHED: from the interrupt until napi_complete
    bool rx = false;         // polls the RX ring
    bool tx = false;         // cleans the TX ring
    int64_t work = 0;        // RX frames processed in the current invocation
    int64_t budget = 64;     // the current invocation's budget
    Owner owner = Owner::kSoftirq;
    bool missed = false;         // NAPI_STATE_MISSED: an IRQ came while the app owned it
    bool skip_schedule = false;  // busy_poll_stop armed the timer (prefer busy poll)
    int64_t defer_count = 0;     // napi->defer_hard_irqs_count
    // napi_complete_done's decision for the poll now ending, made once before the GRO flush.
    bool decided = false;
    bool flushed = false;
    bool unmask = true;  // ret: the driver may re-enable the IRQ
    Duration timeout;    // the hrtimer to arm (0: none)
  };

  // TX path.
  void qdisc_run(Time now);
  bool dequeue_list(Time now, int64_t& packets);
  void validate_into_list(Packet&& p);
  Time direct_xmit(Time cursor);
  Time xmit_one(XmitEntry& e, bool more, Time cursor);
  bool stmmac_mitigation(uint32_t descs, Time t);
  void arm_tx_timer(Time t);
  void tx_engine_start(Time t);
  void on_tx_done(Time t);
  void on_descriptor_completed(const TxSlot& s, Time t);
  uint64_t claim_tx_done();
  void finish_tx_clean(uint64_t n, Time t);
  bool qdisc_has_backlog() const { return qdisc_.backlog_packets() > 0 || !requeue_.empty(); }
  // RX path and NAPI.
  void rx_arrival(Time t);
  void raise_irq(uint8_t ctx, IrqCause cause, Time t);
  void napi_poll(uint8_t ctx, Time t);
  void rx_next(uint8_t ctx, Time t);
  void rx_frame_done(uint8_t ctx, Time t);
  void poll_end(uint8_t ctx, Time t);
  void napi_schedule(uint8_t ctx, Time t, Duration cost);
  void decide_completion(Napi& n);
  void complete_poll(uint8_t ctx, Time t);
  void reenable_irqs(uint8_t ctx, Time t);
  void update_itr(Time t);
  void busy_poll_stop(uint8_t ctx, Time t);
  void napi_timer_fire(Time t);
  bool spinning(Time t) const { return spin_until_ != kNever && t >= spin_from_; }
  void start_spin(Time t);
  void end_spin(Time t);
  bool gro_charge(uint8_t ctx, Time t, uint64_t then_end_poll);
  void gro_deliver(uint8_t ctx, Time t, uint64_t then_end_poll);
  void tx_timer_fire(Time t);
  void dispatch(Time t, const Action& a);
  TxSlot& slot(uint64_t index) { return tx_ring_[index & tx_ring_mask_]; }
  // The incoming wire's next arrival. Only this NIC pops that wire and the peer only appends,
  // so a known front stays valid until our own pop; an empty wire is asked again every time.
  Time next_arrival() const {
    if (next_arrival_ == kNever && in_ != nullptr && in_->in_flight() != 0) {
      next_arrival_ = in_->next_ready().value_or(kNever);
    }
    return next_arrival_;
  }
  // Agenda insertion keeping agenda_next_ (the earliest action's time) current, so the hot
  // next_event()/advance() loop does not rebuild a std::optional per look.
  void schedule(Time at, const Action& a) {
    agenda_.schedule(at, a);
    agenda_next_ = min(agenda_next_, at);
  }
  // The coalescers' timer expiries, cached after every change (next_event() is hot).
  void sync_irq_timers() {
    rx_irq_at_ = timer_of(rx_irq_);
    tx_irq_at_ = timer_of(tx_irq_);
  }
  static Time timer_of(const algo::IrqCoalescer& c) {
    if (c.masked() || c.pending() == 0 || c.params().usecs == Duration::zero()) {
      return kNever;  // what next_ready() says, without the call
    }
    return c.next_ready().value_or(kNever);
  }

  Params params_;
  CpuCosts costs_;
  AnyQueue qdisc_;
  QdiscDropRelease qdisc_drops_;  // qdisc drops of accepted packets -> TSQ releases
  algo::Doorbell doorbell_;
  algo::IrqCoalescer tx_irq_;  // tx-usecs/frames (irq) or IC interrupts (stmmac: frames = 1)
  algo::IrqCoalescer rx_irq_;
  mutable Time next_arrival_ = kNever;  // cache of in_->next_ready(), see next_arrival()
  Time tx_irq_at_ = kNever;             // tx_irq_.next_ready()
  Time rx_irq_at_ = kNever;             // rx_irq_.next_ready()
  Agenda<Action> agenda_;
  Time agenda_next_ = kNever;  // agenda_.next_time(), or kNever
  Wire* out_ = nullptr;
  Wire* in_ = nullptr;
  Cpu* cpu_ = nullptr;
  NicSink* sink_ = nullptr;
  Observer* observer_ = nullptr;

  // Qdisc / stack side.
  std::vector<XmitEntry> xmit_list_;  // the list handed to dev_hard_start_xmit
  EntryFifo requeue_;                 // q->gso_skb
  uint64_t requeue_bytes_ = 0;
  bool in_qdisc_run_ = false;
  bool qdisc_run_pending_ = false;  // NET_TX softirq scheduled
  Time qdisc_watchdog_ = kNever;    // throttled qdisc: run again at this time

  // TX ring: monotonic entry counters, posted >= visible >= hw_next >= done >= claimed >= cleaned.
  std::vector<TxSlot> tx_ring_;
  uint64_t tx_ring_mask_ = 0;
  uint64_t tx_posted_ = 0;
  uint64_t tx_visible_ = 0;  // entries the DMA engine has been told about
  uint64_t tx_hw_next_ = 0;  // entry being / next to be transmitted
  uint64_t tx_done_ = 0;     // entries completed by the hardware
  uint64_t tx_claimed_ = 0;  // entries taken by a clean pass in progress
  uint64_t tx_cleaned_ = 0;
  int64_t tx_free_descs_ = 0;
  uint64_t tx_ring_bytes_ = 0;
  uint64_t tx_unsent_bytes_ = 0;
  uint64_t ic_done_unclaimed_ = 0;  // completed IC descriptors not yet claimed by a clean
  uint64_t xmits_since_kick_ = 0;
  bool tx_engine_busy_ = false;
  bool tx_engine_waiting_ = false;
  // stmmac mitigation.
  int64_t tx_count_frames_ = 0;
  Time tx_timer_at_ = kNever;  // stmmac TX timer expiry
  std::vector<TxRelease> releases_;

  // RX and NAPI.
  PacketFifo rx_ring_;
  algo::Gro gro_;
  algo::NetDim rx_dim_;
  uint16_t rx_dim_events_ = 0;  // RX interrupts that scheduled NAPI (the DIM event counter)
  Napi napi_[2];
  uint8_t rx_ctx_ = 0;
  algo::IntelItr itr_;
  algo::IntelItr::Sample itr_sample_;  // totals since the last ITR update
  Time napi_timer_at_ = kNever;        // the RX NAPI's gro_flush_timeout hrtimer
  // Busy polling: the application spins in [spin_from_, spin_until_); spin_cpu0_ is the core's
  // busy time when the window opened (work done meanwhile is not spin).
  Time spin_from_;
  Time spin_until_ = kNever;
  Duration spin_cpu0_;
  uint8_t tx_ctx_ = 0;

  Stats stats_;
};

}  // namespace nicsim::model
