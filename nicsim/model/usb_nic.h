#pragma once
// UsbNic — a USB 2.0 high-speed Ethernet adapter (SMSC LAN95xx or ASIX AX88178/AX88772) with
// its host driver (Linux usbnet + smsc95xx/asix, or FreeBSD uether + if_smsc/if_axe), as one
// deterministic state machine implementing the Nic contract (nic.h).
//
// Behaviour follows docs/mechanisms §4 (SMSC turbo mode, framing), §5 (ASIX MFB, framing,
// the ≈290 µs per-transfer cost of §5.4), §6 (USB 2.0 bus, EHCI interrupt threshold, usbnet
// rx_qlen/tx_qlen, FreeBSD one-transfer-each-way) and §10 (copies, device FIFOs, AFC PAUSE):
//
// TX  send() → qdisc (AnyQueue; pfifo_fast by default in presets) → driver:
//     * Linux usbnet: one URB per frame (tx_fixup), the netdev queue stops once tx_qlen URBs
//       are in flight (txq.qlen >= tx_qlen after a submit) and wakes in the completion bottom
//       half when fewer are; no BQL.
//     * FreeBSD uether: one bulk-OUT transfer at a time carrying up to 16 frames (each as its
//       own USB frame); the next is filled by the completion callback (IFF_DRV_OACTIVE).
//     Each frame costs CpuCosts::per_tx_frame (+ copy(len) on FreeBSD, which copies mbufs into
//     the transfer buffer; + per_gso_segment per segment when a GSO packet is segmented in
//     software). Its bulk-OUT bytes (SMSC: 8 command-word bytes + frame; ASIX: 4-byte header +
//     frame [+ 4-byte dummy header when a multiple of 512]) cross the bus in 512-byte packets,
//     one per 125 µs / bulk_out_packets_per_microframe, a ZLP ending SMSC frames whose length
//     is a multiple of 512. A packet goes only when the device TX FIFO has room for it (else
//     the device NAKs and the host retries once space frees). The device transmits a frame on
//     the outgoing Wire once it is entirely in the FIFO (store and forward), honouring PAUSE
//     from the peer, and frees its FIFO bytes at the frame's last bit.
//     The URB completes when its last packet has crossed the bus; the host sees that at the
//     next EHCI completion boundary; the tx_complete job (per_usb_transfer + per_tx_clean per
//     frame) then releases the socket bytes (NicSink::tx_released, what TSQ waits for) and
//     wakes the queue / refills the transfer.
// RX  frames popped from the incoming Wire at their arrival time enter the device
//     (algo::UsbRxAggregator: SMSC MEF/SEF + bulk-in delay + burst cap, ASIX MFB) with their
//     exact bulk-IN size (SMSC: 4 status + 2 RXDOFF + frame + 4 FCS [+ 2 COE] padded to 4;
//     ASIX: 4-byte header + frame padded to even). A completed bulk-IN transfer is seen by the
//     host at the next EHCI completion boundary (+ irq_latency). The host job costs
//     per_interrupt (once per EHCI interrupt) + per_usb_transfer + per frame per_rx_frame
//     (+ copy(len) where the driver copies: FreeBSD both chips, Linux asix; Linux smsc95xx
//     clones). Frames are delivered (Stage::kRxDeliver) when the job ends. The bulk-IN
//     transfer is re-posted by Linux from the completion handler (after per_interrupt +
//     per_usb_transfer; rx_transfers stay posted), by FreeBSD after the callback has parsed
//     (and copied) the buffer — the single transfer is idle meanwhile.
//     PAUSE: while the device asserts flow control (RX FIFO above the high watermark, until it
//     drains below the low one) the incoming wire's transmitter is held for pause_time,
//     refreshed every pause_time / 2.
// Real bytes: when frames carry a payload (the emulator), each bulk-IN transfer is encoded
//     with the chip's codec (device side) and decoded with the driver's rules (host side);
//     the delivered frames are the decoded bytes and frames the driver would not deliver are
//     dropped (rx_malformed_drops, DropReason::kMalformed). TX frames are encoded by the
//     driver and decoded by the device the same way. Without payload only sizes are computed.
//
// Units: bytes are skb->len unless named usb_* (bytes on the USB, with the chip's framing).
// No clock is read: everything happens in advance(now) / send(p, now).
//
// Deviations (docs/models/usb_nic.md): bulk-IN and bulk-OUT are paced independently (the
// bus is not shared between the two endpoints); the EHCI boundary grid starts at Time zero;
// a refreshed PAUSE of pause_time instead of 802.3x quanta + XON; the PAUSE frames themselves
// take no time on the outgoing wire; TX checksum-offload preambles (SMSC +4 bytes) are not
// used (the Packet does not say which frames want CHECKSUM_PARTIAL); GSO packets are split
// into near-equal segments; a payload-carrying GSO packet is sent unsegmented; the Cpu is a
// FIFO server, so the (hard-IRQ) completion handler does not preempt queued work; usbnet's RX
// error throttling, the bottom half's 10-URB refill limit and the TX watchdog are not
// modelled; frame-level malformed-transfer handling happens only with payloads.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/algo/asix_framing.h"
#include "nicsim/algo/smsc95xx_framing.h"
#include "nicsim/algo/usb_framing_common.h"
#include "nicsim/algo/usb_rx_aggregator.h"
#include "nicsim/core/element.h"
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

namespace usb_nic_detail {

// A growable ring of trivially copyable records (allocation-free once warmed up).
template <class T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  void push_back(const T& v) {
    if (size_ == slots_.size()) {
      grow();
    }
    slots_[(head_ + size_) & (slots_.size() - 1)] = v;
    ++size_;
  }
  T pop_front() {
    T v = slots_[head_];
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    return v;
  }
  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }
  const T& operator[](size_t i) const { return slots_[(head_ + i) & (slots_.size() - 1)]; }

 private:
  void grow() {
    const size_t cap = slots_.empty() ? 16 : slots_.size() * 2;
    std::vector<T> next(cap);
    for (size_t i = 0; i < size_; ++i) {
      next[i] = slots_[(head_ + i) & (slots_.size() - 1)];
    }
    slots_ = std::move(next);
    head_ = 0;
  }
  std::vector<T> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace usb_nic_detail

// Linux usbnet MAX_QUEUE_MEMORY = 60 × 1518 (docs/mechanisms/usbnet.md §6.2).
inline constexpr int64_t kUsbnetMaxQueueMemory = 60 * 1518;
// Linux usbnet_update_max_qlen at high speed: rx_qlen = MAX_QUEUE_MEMORY / rx_urb_size,
// tx_qlen = MAX_QUEUE_MEMORY / hard_mtu (§6.2).
constexpr int64_t usbnet_rx_qlen(int64_t rx_urb_size) {
  return kUsbnetMaxQueueMemory / rx_urb_size;
}
constexpr int64_t usbnet_tx_qlen(int64_t hard_mtu) { return kUsbnetMaxQueueMemory / hard_mtu; }

// Device RX side presets for the aggregator (§4.2, §5.1).
// SMSC LAN95xx: turbo on = MEF + BCE, BURST_CAP 37 × 512 = 18,944, BULK_IN_DLY 0x2000 ≈
// 136.5 µs; turbo off = SEF. 20 KB RX FIFO (LAN950x datasheet DS00001875 §5.4: 28 KB SRAM,
// 20 KB RX + 8 KB TX). AFC_CFG 0x00F830A1: high watermark 0xF8 × 64 = 15,872 B, low 0x30 ×
// 64 = 3,072 B (§4.2 step 6).
algo::UsbRxAggregator::Params smsc95xx_rx_aggregation(bool turbo_mode);
// ASIX AX88178/AX88772 RX maximum frame burst (MFB 2048/4096/8192/16384, §5.1): no hold time.
// RX FIFO 20 KB (AX88772 datasheet: "20KB SRAM for RX packet buffering and 8KB SRAM for TX");
// the flow-control watermarks are not in our sources: off (presets set them when known).
algo::UsbRxAggregator::Params asix_rx_aggregation(int64_t max_frame_burst);

class UsbNic final : public Nic {
 public:
  enum class Chip : uint8_t {
    kSmsc95xx,  // SMSC/Microchip LAN9500/9512/9514 (smsc95xx / if_smsc)
    kAsix,      // ASIX AX88178 / AX88772 with the 4-byte length header (asix / if_axe)
  };
  using Driver = algo::UsbNetDriver;  // kLinux = usbnet, kFreeBsd = uether

  struct Params {
    Chip chip = Chip::kSmsc95xx;     // key "chip": smsc95xx | asix
    Driver driver = Driver::kLinux;  // key "driver": linux_usbnet | freebsd
    // Device bulk-IN behaviour (keys mode / burst_cap / bulk_in_delay / packets_per_microframe
    // / rx_fifo / pause_high / pause_low). Default: LAN95xx turbo on, as Linux turbo_mode=1.
    algo::UsbRxAggregator::Params rx_aggregation = smsc95xx_rx_aggregation(true);
    // Bulk-IN transfers kept posted. Linux usbnet rx_qlen = 91080 / rx_urb_size = 4 for
    // smsc95xx turbo (44 at 2048); FreeBSD uether: exactly 1 (§6.2, §6.3).
    int64_t rx_transfers = usbnet_rx_qlen(18'944);
    // Host bulk-IN buffer (key "rx_urb_size"): Linux smsc95xx turbo 18,944 (2048 turbo off),
    // asix 2048 (AX88178 by MTU); FreeBSD smsc 20,480, axe 16,384. Caps the device burst.
    int64_t rx_urb_bytes = 18'944;
    // Linux usbnet tx_qlen = 91080 / hard_mtu: 59 for smsc95xx (hard_mtu 1500 + 14 + 12),
    // 60 for plain 1514 (asix). FreeBSD: unused (one transfer at a time).
    int64_t tx_qlen = usbnet_tx_qlen(1500 + 14 + 12);
    // Frames per bulk-OUT transfer: Linux 1 (one URB per skb), FreeBSD up to 16.
    int64_t tx_frames_per_transfer = 1;
    // EHCI USBCMD interrupt threshold as log2 of microframes: completions are seen at the
    // next multiple of 125 µs × 2^log2_irq_thresh. Linux ehci-hcd log2_irq_thresh default 0
    // (125 µs); the hardware default 8 microframes is 3 (1 ms) (§6.1).
    int64_t log2_irq_thresh = 0;
    // Delay from the EHCI interrupt to the handler starting (interrupt controller, wake-up);
    // the handler's own cost is CpuCosts::per_interrupt. Presets set it; 0 by default.
    Duration irq_latency = Duration::zero();
    // Bulk-OUT packets per microframe: 13 is the USB 2.0 HS bulk limit; ≈8 on real host
    // controllers (unverified, §6.1).
    int64_t bulk_out_packets_per_microframe = 13;
    // Device TX FIFO (key "tx_fifo"): 8 KB on both LAN950x (DS00001875 §5.4) and AX88772
    // (datasheet feature list).
    int64_t tx_fifo_bytes = 8 * 1024;
    // How long one PAUSE holds the link partner, refreshed every pause_time / 2 while the
    // device asserts flow control. ≈350 µs: the LAN95xx AFC_CFG backpressure duration as the
    // drivers program it (0x00F830A1, §4.2 step 6).
    Duration pause_time = Duration::us(350);
    // SMSC RX checksum offload: a 2-byte COE word follows the FCS in each RX frame. On in both
    // drivers (Linux DEFAULT_RX_CSUM_ENABLE, FreeBSD IFCAP_RXCSUM; §4.2 step 6).
    bool rx_csum = true;
    Validation validate() const;
  };

  // Named starting points for presets (every value documented above).
  static Params linux_smsc95xx(bool turbo_mode);
  // FreeBSD if_smsc: one RX transfer of 20,480 B, 16 frames per TX transfer, and no PAUSE
  // (uether never negotiates flow control, so the AFC watermarks stay inactive).
  static Params freebsd_smsc95xx(bool rx_packet_batching);
  static Params linux_asix(int64_t rx_urb_size);       // AX88772: 2048; AX88178 by MTU
  static Params freebsd_axe(int64_t max_frame_burst);  // post-2009 axe: 16384

  static constexpr size_t kHistBuckets = 33;  // frames per transfer: [n] for n < 32, [32] = >= 32

  struct Stats {
    // --- TX ---
    uint64_t tx_offered = 0;          // packets handed to send()
    uint64_t tx_segments = 0;         // frames the driver took from the qdisc (GSO segments)
    uint64_t tx_malformed_drops = 0;  // frames the TX framing could not encode (driver drops)
    uint64_t tx_transfers = 0;        // bulk-OUT transfers (URBs) submitted
    uint64_t tx_transfer_frames = 0;  // frames in them
    uint64_t tx_transfers_done = 0;   // transfers whose completion job has run
    uint64_t tx_released = 0;         // frames released to the socket (TSQ)
    uint64_t tx_usb_packets = 0;      // bulk-OUT packets incl. ZLPs
    uint64_t tx_usb_bytes = 0;
    uint64_t tx_fifo_stalls = 0;  // times bulk-OUT had to wait for TX FIFO space (NAK)
    uint64_t max_tx_fifo_bytes = 0;
    uint64_t tx_queue_stops = 0;  // Linux netif_stop_queue (txq.qlen reached tx_qlen)
    uint64_t tx_queue_wakes = 0;
    uint64_t tx_wire_frames = 0;  // frames the device put on the outgoing wire
    std::array<uint64_t, kHistBuckets> tx_frames_per_transfer{};
    // --- RX ---
    uint64_t rx_frames_in = 0;        // frames popped from the incoming wire
    uint64_t rx_fifo_drops = 0;       // device RX FIFO overflow (or frame above the burst cap)
    uint64_t rx_transfers = 0;        // bulk-IN transfers handled by the host
    uint64_t rx_transfer_frames = 0;  // frames in them
    uint64_t rx_usb_bytes = 0;
    uint64_t rx_malformed_drops = 0;  // frames the driver's decoder did not deliver
    uint64_t rx_delivered = 0;
    uint64_t pause_frames = 0;  // PAUSE assertions and refreshes
    Duration pause_time;        // total time the incoming wire was held
    Duration rx_idle_time;      // time with no bulk-IN transfer posted
    std::array<uint64_t, kHistBuckets> rx_frames_per_transfer{};
    // --- host ---
    uint64_t interrupts = 0;          // EHCI completion interrupts
    uint64_t completions = 0;         // transfer completions handled (both directions)
    Duration completion_delay_total;  // bus end of a transfer -> its handler becomes ready
    Duration completion_delay_max;
    Duration cpu_time;  // CPU time charged by this NIC's driver work

    double mean_rx_frames_per_transfer() const {
      return rx_transfers == 0
                 ? 0.0
                 : static_cast<double>(rx_transfer_frames) / static_cast<double>(rx_transfers);
    }
    double mean_tx_frames_per_transfer() const {
      return tx_transfers == 0
                 ? 0.0
                 : static_cast<double>(tx_transfer_frames) / static_cast<double>(tx_transfers);
    }
  };

  UsbNic(const Params& params, AnyQueue qdisc, const CpuCosts& costs);

  void attach(Wire* out, Wire* in, Cpu* cpu, NicSink* sink) override;
  Verdict send(Packet&& p, Time now) override;
  std::optional<Time> next_event() const override;
  void advance(Time now) override;
  NicCounters counters() const override;
  NicQueueSample queue_sample() const override;
  std::string describe() const override;
  AnyQueue* qdisc_queue() override { return &qdisc_; }

  // Drops inside the NIC (device FIFO overflow, malformed framing) go to `o`. The qdisc's own
  // observer is set on the qdisc.
  void set_observer(Observer* o);

  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  const AnyQueue& qdisc() const { return qdisc_; }
  const algo::UsbRxAggregator& rx_device() const { return agg_; }

  // Bytes on the USB for one frame of `len` bytes (docs/mechanisms §4.4/4.5, §5.2/5.3).
  uint32_t rx_usb_len(uint32_t len) const;
  uint32_t tx_usb_len(uint32_t len) const;

  // Where frames are, for the conservation identities the tests assert:
  //   tx_segments == tx_malformed_drops + tx_frames_held() + tx_wire_frames
  //   rx_frames_in == rx_fifo_drops + rx_frames_held() + rx_malformed_drops + rx_delivered
  uint64_t tx_frames_held() const;  // requeued segments, on the bus, in the device TX FIFO
  uint64_t rx_frames_held() const;  // device RX FIFO / transfers, awaiting the host, the job
  uint64_t tx_urbs_in_flight() const { return tx_inflight_urbs_; }
  bool tx_queue_stopped() const { return params_.driver == Driver::kLinux ? stopped_ : tx_busy_; }
  uint64_t tx_fifo_used() const { return tx_fifo_used_; }

 private:
  enum class ActionKind : uint8_t {
    kInterrupt,      // EHCI interrupt handler ready (t = the completion boundary)
    kRxPost,         // the driver posts one bulk-IN transfer
    kRxDeliver,      // the RX job finished: deliver `count` frames
    kTxBusDone,      // the last packet of a bulk-OUT transfer crossed the bus
    kTxDone,         // the tx_complete job finished: release `count` frames
    kPauseRefresh,   // re-assert PAUSE if the device still asks for it
    kQdiscWatchdog,  // a non-work-conserving qdisc may release a packet
  };
  struct Action {
    ActionKind kind;
    uint32_t count = 0;
    Time t;
  };
  enum class XferKind : uint8_t { kRx, kTx };
  struct Completion {  // a transfer that finished on the bus, not yet handled by the host
    XferKind kind;
    uint32_t frames;
    uint64_t usb_bytes;
    Time completed;
  };
  struct BusFrame {       // a frame of a submitted bulk-OUT transfer, not yet entirely sent
    Time ready;           // the URB was submitted (driver's CPU work done)
    uint32_t usb_len;     // its bytes in the transfer (header, frame, ASIX dummy header)
    bool seg_end;         // the last frame of a USB frame (packetised on its own, short/ZLP end)
    uint32_t urb_frames;  // on the last frame of its URB: frames in the URB; else 0
  };
  struct FifoFrame {  // a frame entirely in the device TX FIFO
    Time ready;
    uint32_t usb_len;
  };
  struct WireFrame {  // a frame being serialised: its FIFO bytes free at last_bit
    Time last_bit;
    uint32_t usb_len;
  };

  void step(Time t);
  void refresh_next();  // recomputes internal_next_ after the model's state changed
  std::optional<Time> next_bus_out() const;
  std::optional<Time> next_mac() const;
  void bus_out_packet(Time t);
  void mac_transmit(Time t);
  void pop_wire_arrivals(Time t);
  void pop_rx_transfers(Time t);
  void update_pause(Time t);
  void run_action(Time t, const Action& a);
  void register_completion(const Completion& c);
  void handle_interrupt(Time now, Time boundary);
  void handle_rx_transfer(Time now, const Completion& c, Duration head);
  void post_rx(Time t);
  void tx_done(Time t, uint32_t frames);
  Time completion_boundary(Time c) const;

  // A frame taken from the qdisc (or a software-GSO segment of one) with the release its
  // socket gets back when the frame is freed: built once, by release_of(), for both drivers.
  struct TxFrame {
    Packet packet;
    TxRelease release;
  };

  void run_qdisc(Time now);
  // The next frame to transmit; adds the software-GSO work of a newly split packet to gso_cost.
  std::optional<TxFrame> next_tx_frame(Time now, Duration& gso_cost);
  bool tx_encodable(uint32_t len) const;
  void encode_tx_payloads(std::span<Packet> frames);  // driver encode + device decode
  void split_gso(Packet&& p);
  uint64_t segment_bytes_from_head() const;
  void assert_pause(Time t);
  void submit_frame(Packet&& p, Time now, Time ready, const TxRelease& release, uint32_t usb_len,
                    bool seg_end, uint32_t urb_frames);
  void drop_tx(TxFrame&& f, Time now);
  void decode_rx_payloads(std::vector<Packet>& frames);  // sets good_[i]
  void charge(Duration d) { stats_.cpu_time += d; }

  static constexpr uint32_t kMaxPacket = 512;  // USB 2.0 HS bulk max packet size (§6.1)

  Params params_;
  CpuCosts costs_;
  AnyQueue qdisc_;
  QdiscDropRelease qdisc_drops_;  // qdisc drops of accepted packets -> TSQ releases
  algo::UsbRxAggregator agg_;
  algo::Smsc95xxRx smsc_rx_;
  algo::Smsc95xxTx smsc_tx_;
  algo::AsixRx asix_rx_;
  algo::AsixTx asix_tx_;
  bool rx_copies_;       // FreeBSD (both chips) and Linux asix copy every RX frame
  Duration slot_out_;    // one bulk-OUT packet slot
  Duration irq_period_;  // EHCI interrupt threshold interval

  Wire* out_ = nullptr;
  Wire* in_ = nullptr;
  Cpu* cpu_ = nullptr;
  NicSink* sink_ = nullptr;
  Observer* observer_ = nullptr;
  Time now_;
  bool in_advance_ = false;
  Agenda<Action> agenda_;
  // Earliest internal event (agenda, device bulk-IN, bulk-OUT, TX FIFO frees); the wires'
  // parts (arrivals, PAUSE of the outgoing wire) are read live in next_event().
  std::optional<Time> internal_next_;

  // TX, host side.
  PacketFifo requeue_;  // GSO segments taken from the qdisc, not yet submitted
  uint64_t requeue_bytes_ = 0;
  bool stopped_ = false;           // Linux: netdev queue stopped
  bool tx_busy_ = false;           // FreeBSD: the bulk-OUT transfer is in flight (OACTIVE)
  uint64_t tx_inflight_urbs_ = 0;  // Linux txq.qlen / FreeBSD 0 or 1
  uint64_t tx_inflight_frames_ = 0;
  uint64_t tx_inflight_bytes_ = 0;
  usb_nic_detail::Ring<TxRelease> tx_records_;  // per frame of submitted URBs, until released
  std::optional<Time> watchdog_at_;
  // TX, bus and device.
  PacketFifo bus_frames_;
  usb_nic_detail::Ring<BusFrame> bus_meta_;
  uint32_t out_sent_ = 0;      // bytes of the head frame already sent
  uint64_t out_seg_left_ = 0;  // bytes of the current USB frame not yet sent
  bool out_zlp_pending_ = false;
  uint32_t out_urb_after_zlp_ = 0;  // frames of the URB that completes with the pending ZLP
  bool out_blocked_ = false;
  Time bus_out_free_;
  PacketFifo dev_tx_;
  usb_nic_detail::Ring<FifoFrame> dev_tx_meta_;
  usb_nic_detail::Ring<WireFrame> on_wire_;
  uint64_t tx_fifo_used_ = 0;
  uint64_t tx_wire_bytes_ = 0;

  // RX.
  PacketFifo rx_host_;     // frames of completed transfers awaiting the interrupt
  PacketFifo rx_deliver_;  // frames whose job is running
  uint64_t rx_delivered_bytes_ = 0;
  bool pausing_ = false;
  Time paused_until_;
  std::optional<Time> idle_since_;

  // Host completions.
  usb_nic_detail::Ring<Completion> pending_;
  std::optional<Time> irq_scheduled_;  // boundary of the interrupt scheduled, not yet run

  // Scratch for payload encode/decode (reused: no allocation once warmed up).
  std::vector<Packet> rx_batch_;
  std::vector<uint8_t> scratch_;
  std::vector<size_t> offsets_;
  std::vector<uint8_t> good_;
  std::vector<uint8_t> zeros_;    // stand-in bytes for a payload-less frame in a mixed batch
  std::vector<Packet> tx_batch_;  // FreeBSD: frames gathered for one bulk-OUT transfer
  std::vector<TxRelease> tx_batch_rec_;

  Stats stats_;
};

std::string_view to_string(UsbNic::Chip c);
std::string_view to_string(UsbNic::Driver d);
std::optional<UsbNic::Chip> parse_usb_chip(std::string_view s);      // "smsc95xx" | "asix"
std::optional<UsbNic::Driver> parse_usb_driver(std::string_view s);  // "linux_usbnet" | "freebsd"

}  // namespace nicsim::model
