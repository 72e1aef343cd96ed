#pragma once
// UsbRxAggregator — the device side of a USB 2.0 Ethernet adapter's bulk-IN endpoint: which
// received frames go into which bulk-IN transfer, and when each transfer ends.
//
// One model covers both chips the seeds are about (docs/mechanisms §4, §5, §6.1):
//
//  * SMSC LAN95xx "turbo mode" = MEF + BURST_CAP + BULK_IN_DLY (§4.2): frames are packed
//    back-to-back into 512-byte bulk packets (a frame may span packets). While at least 512
//    bytes are waiting the device sends full packets; when less than a full packet is left it
//    starts the bulk-in delay timer and holds the terminating short packet (or ZLP) until the
//    timer expires; if enough data for another full packet arrives first, it sends it and the
//    timer restarts. A lone sub-512-byte frame arriving at an empty FIFO also waits for the
//    timer. The transfer ends at the burst cap (BURST_CAP × 512 = 18,944 bytes at high speed).
//    Turbo off = SEF: one frame per transfer, ended by the frame's last (short) packet or a
//    ZLP, no delay.
//  * ASIX AX88178/AX88772 RX maximum frame burst (MFB 2K/4K/8K/16K, §5.1): frames are packed
//    up to the burst size; the transfer ends with a short packet as soon as no further complete
//    frame is waiting (hold time 0).
//
// The device is store-and-forward: a frame is eligible once it is entirely in the RX FIFO.
// Frames never straddle transfers (the Linux smsc95xx rx_fixup cannot reassemble across URBs;
// a frame that does not fit in the rest of the burst ends the transfer) — see Deviations.
// The device sends only while the host has a bulk-IN transfer posted (Linux usbnet keeps
// rx_qlen URBs posted; FreeBSD one, §6.2/§6.3); with none posted, frames wait in the FIFO and
// a full FIFO drops arrivals (overflow) and asserts PAUSE flow control above the high
// watermark (SMSC AFC_CFG ≈ 15.5 KB / 3 KB, §4.2 step 6, §10).
//
// Bus timing: bulk packets are paced at one per slot = 125 µs / packets_per_microframe
// (USB 2.0 high speed; 13 theoretical, ≈10 on real host controllers, §6.1). The completion of
// a transfer is the end of its last packet; the host's completion latency (EHCI interrupt
// threshold) and per-transfer cost belong to the host model, not here.
//
// Units: bytes as they appear on the USB (frame + the chip's per-frame header, padding and
// FCS — computed by the caller from the framing codec). No clock is read: every input first
// advances the device to `now`; a back-end calls advance(next_ready()) for timer events.

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "nicsim/core/observer.h"
#include "nicsim/core/packet.h"
#include "nicsim/core/param_error.h"
#include "nicsim/core/time.h"

namespace nicsim::algo {

class UsbRxAggregator {
 public:
  enum class Mode : uint8_t {
    kSingleFrame,  // SMSC SEF (turbo off): one frame per transfer
    kMultiFrame,   // SMSC MEF (turbo on) or ASIX MFB: frames packed up to burst_cap_bytes
  };

  struct Params {
    Mode mode = Mode::kMultiFrame;
    // Largest transfer in bytes: SMSC BURST_CAP 37 × 512 = 18,944 (DEFAULT_HS_BURST_CAP_SIZE,
    // §4.2 step 3); ASIX MFB 2048..16384 (§5.1). Also bounded by the host's URB size.
    int64_t burst_cap_bytes = 18'944;
    // SMSC BULK_IN_DLY: 0x2000 × 16.667 ns ≈ 136.5 µs as both drivers program it (§4.2 step 4).
    // 0 = end the transfer as soon as no full packet can be sent (ASIX).
    Duration hold_time = Duration::ns(136'533);
    int64_t max_packet_bytes = 512;        // bulk max packet size at high speed (§6.1)
    int64_t packets_per_microframe = 13;   // USB 2.0 HS bulk limit (§6.1); ≈10 on real hosts
    // Device RX FIFO in bytes. LAN95xx: 20 KiB is assumed here (inferred from the AFC
    // watermarks); presets set the chip's value.
    int64_t fifo_bytes = 20 * 1024;
    // Flow control (PAUSE) watermarks in bytes; 0 = no flow control. SMSC AFC_CFG 0x00F830A1:
    // high ≈ 15.5 KB, low ≈ 3 KB (§4.2 step 6).
    int64_t pause_high_bytes = 0;
    int64_t pause_low_bytes = 0;
    Validation validate() const;
  };

  // A completed bulk-IN transfer.
  struct Transfer {
    std::vector<Packet> frames;  // in arrival order
    uint64_t bytes = 0;          // bytes on the USB (sum of the frames' usb lengths)
    uint32_t usb_packets = 0;    // bulk packets including the terminating short packet / ZLP
    bool zlp = false;            // ended by a zero-length packet
    Time first_packet;           // start of the first bulk packet
    Time completed;              // end of the last bulk packet
  };

  struct Stats {
    uint64_t frames_in = 0;         // frames offered from the PHY
    uint64_t frame_bytes_in = 0;    // their usb lengths
    uint64_t fifo_drops = 0;        // frames dropped because the RX FIFO was full
    uint64_t fifo_drop_bytes = 0;
    uint64_t frames_out = 0;        // frames delivered to the host (pop_completed)
    uint64_t frame_bytes_out = 0;
    uint64_t transfers = 0;
    uint64_t usb_packets = 0;
    uint64_t short_packets = 0;     // transfers ended by a short packet
    uint64_t zlps = 0;              // transfers ended by a ZLP
    uint64_t cap_ends = 0;          // transfers ended by the burst cap (no short packet needed)
    uint64_t hold_expiries = 0;     // transfers ended by the bulk-in delay timer
    uint64_t pause_on = 0;          // PAUSE asserted
    uint64_t max_fifo_bytes = 0;    // high-water mark of the FIFO
    // Identity: frames_in == frames_out + fifo_drops + frames in the FIFO, in the transfer
    // being sent, or in completed transfers not yet popped.
  };

  explicit UsbRxAggregator(const Params& params);

  // A whole frame of `usb_len` bytes (as it will appear in the transfer) arrived in the FIFO.
  // Returns false if it was dropped (FIFO full).
  bool frame_arrived(Packet&& frame, uint32_t usb_len, Time now);
  // The host posted one bulk-IN transfer (URB) of up to burst_cap_bytes.
  void post_transfer(Time now);
  // Processes the device up to `now` (packet slots, the hold timer).
  void advance(Time now);
  // The next time the device has something to do (a packet slot with data to send or the
  // hold timer); nullopt if it is idle until a frame arrives or a transfer is posted.
  std::optional<Time> next_ready() const;
  // Advances to `now` and returns the oldest transfer completed by then, if any.
  std::optional<Transfer> pop_completed(Time now);

  // Hands back a delivered transfer's (emptied) frame vector so the next transfer reuses its
  // capacity instead of allocating (optional; keeps the steady state allocation-free).
  void recycle(std::vector<Packet>&& frames);

  bool pause_asserted() const { return paused_; }
  uint64_t fifo_bytes() const { return fifo_bytes_; }
  uint64_t fifo_frames() const { return fifo_.size(); }
  uint32_t posted_transfers() const { return posted_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  void set_observer(Observer* o) { observer_ = o; }

 private:
  struct Frame {
    Packet packet;
    uint32_t usb_len;
  };
  struct Fit {
    uint64_t sendable = 0;  // bytes of waiting frames that fit in the rest of the transfer
    bool all_fit = true;    // no waiting frame is excluded by the burst cap
  };
  const Fit& fit() const;
  uint64_t sendable_bytes() const;
  bool next_frame_fits() const;
  std::optional<Time> next_action() const;
  void act(Time at);
  void send_packet(Time at, uint32_t bytes);
  void finish_transfer(Time end, bool zlp, bool by_cap);
  void move_sent_frames();
  void update_pause();

  Params params_;
  Duration slot_;  // duration of one bulk packet slot
  std::deque<Frame> fifo_;
  uint64_t fifo_bytes_ = 0;       // bytes of frames in the FIFO (including the sent part of head)
  uint64_t head_sent_ = 0;        // bytes of the FIFO's first frame already sent
  uint32_t posted_ = 0;           // bulk-IN transfers posted by the host, not yet completed
  bool active_ = false;           // a transfer has started (at least one packet sent)
  bool zlp_pending_ = false;      // SEF: the frame ended on a packet boundary, a ZLP follows
  Time now_;                      // the device has been advanced to this time
  Transfer current_;
  Time bus_free_;                 // end of the last packet slot used
  std::optional<Time> hold_deadline_;
  bool paused_ = false;
  std::deque<Transfer> completed_;
  std::vector<std::vector<Packet>> spare_frames_;  // recycled frame vectors
  mutable Fit fit_;
  mutable bool fit_dirty_ = true;
  Stats stats_;
  Observer* observer_ = nullptr;
};

}  // namespace nicsim::algo
