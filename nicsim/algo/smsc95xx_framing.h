#pragma once
// Smsc95xx framing — the byte layout of the bulk transfers of SMSC LAN95xx USB Ethernet chips,
// as encoders (what the device or the driver writes) and decoders (what the other side parses).
//
// RX (bulk-IN, docs/mechanisms §4.4). Each frame in a transfer is: a 4-byte little-endian
// RX status word (frame length FL in bits 29:16, error summary ES bit 15, other error bits),
// RXDOFF = 2 pad bytes, the Ethernet frame with its 4-byte FCS (and a 2-byte checksum word
// when RX checksum offload, COE, is on), then padding so the next status word starts on a
// 4-byte boundary. Smsc95xxRx::decode follows Linux smsc95xx_rx_fixup + usbnet rx_process
// (default) or FreeBSD if_smsc smsc_bulk_read_callback (UsbNetDriver::kFreeBsd):
//   Linux: a transfer < 14 bytes is an error; per frame: FL > remaining data aborts the rest
//   (the 2023 "Limit packet length to skb->len" check); ES frames are counted (rx_errors,
//   rx_dropped, crc/frame/length sub-counters) and skipped; FL > 1514 + 12 aborts the rest;
//   a good frame is delivered without FCS/COE word. Every abort counts one rx_error (usbnet).
//   The last frame of a transfer reuses the URB itself: usbnet counts it as a length error
//   instead of delivering it if it is < 14 bytes, and counts one length error when the
//   transfer ends with an ES frame or with padding (nothing left for usbnet to deliver).
//   FreeBSD: a transfer < 8 bytes is ignored; the offset is re-aligned to 4 before each
//   status word; ES frames count an input error and are skipped without a length check; a
//   good frame shorter than 14 or longer than the remaining data, or shorter than 18 once the
//   COE word is removed, stops parsing silently (no error counted).
// TX (bulk-OUT, §4.5). Each frame is prefixed by TX_CMD_A (bits 20:16 data start offset,
// bit 13 first segment, bit 12 last segment, bits 10:0 buffer size) and TX_CMD_B (bit 14
// checksum enable, bit 13 add-CRC disable, bit 12 disable padding, bits 10:0 frame length),
// both little-endian; with checksum offload a preamble word (csum start offset in bits 15:0,
// insert offset in bits 31:16) precedes the frame and both lengths grow by 4. Smsc95xxTx
// encodes as Linux smsc95xx_tx_fixup (frames <= 45 bytes, or whose checksum field sits in
// the last 5 bytes, get a software checksum instead: hardware bug workaround).
//
// Units: bytes. Encoders append to a caller-owned std::vector<uint8_t> that holds one bulk
// transfer being built (offset 0 = start of the transfer), so several frames can be packed;
// append_size() says how many bytes an encode would add, for models that only need sizes.
// Decoders never read outside the given span, never allocate, and hand each good frame to a
// sink as a span into the transfer (valid while the transfer is). Pure byte codecs: no
// clock, no I/O.
// Deviations (docs/algorithms/smsc95xx_framing.md): the FCS is not checked (neither driver
// does; the chip flags CRC errors in the status word); Linux mode aborts a good frame whose
// FL is below the FCS (+COE) length and a status word with < 6 bytes left, where Linux would
// read past the data; FreeBSD mode bounds frames by the mbuf cluster (2046 bytes); TX frames
// packed into one transfer are 4-byte aligned (inferred: both drivers send one frame per
// transfer or per USB frame); TX multi-segment frames are rejected by the device-side decoder.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "nicsim/algo/usb_framing_common.h"
#include "nicsim/core/param_error.h"

namespace nicsim::algo {

// Ethernet CRC-32 (IEEE 802.3: reflected polynomial 0xEDB88320, initial value and final XOR
// 0xFFFFFFFF). The FCS on the wire is this value least significant byte first.
uint32_t ethernet_crc32(std::span<const uint8_t> data);

// Internet checksum (RFC 1071) of data: the one's complement of the folded one's complement
// sum of its big-endian 16-bit words, as Linux csum_fold(csum_partial(...)) computes it.
uint16_t internet_checksum(std::span<const uint8_t> data);

class Smsc95xxRx {
 public:
  // RX status word (Linux smsc95xx.h RX_STS_*; §4.4).
  static constexpr uint32_t kRxStsFf = 1u << 30;       // filter fail
  static constexpr uint32_t kRxStsFl = 0x3FFFu << 16;  // frame length, bits 29:16
  static constexpr uint32_t kRxStsFlShift = 16;
  static constexpr uint32_t kRxStsEs = 1u << 15;  // error summary
  static constexpr uint32_t kRxStsBf = 1u << 13;  // broadcast frame
  static constexpr uint32_t kRxStsLe = 1u << 12;  // length error
  static constexpr uint32_t kRxStsRf = 1u << 11;  // runt frame
  static constexpr uint32_t kRxStsMf = 1u << 10;  // multicast frame
  static constexpr uint32_t kRxStsTl = 1u << 7;   // frame too long
  static constexpr uint32_t kRxStsCs = 1u << 6;   // collision seen
  static constexpr uint32_t kRxStsFt = 1u << 5;   // frame type
  static constexpr uint32_t kRxStsRw = 1u << 4;   // receive watchdog
  static constexpr uint32_t kRxStsMe = 1u << 3;   // MII error
  static constexpr uint32_t kRxStsDb = 1u << 2;   // dribbling bit
  static constexpr uint32_t kRxStsCrc = 1u << 1;  // CRC error

  static constexpr size_t kStatusLen = 4;
  static constexpr size_t kRxDataOffset = 2;  // HW_CFG.RXDOFF = NET_IP_ALIGN / ETHER_ALIGN (§4.2)
  static constexpr size_t kFcsLen = 4;
  static constexpr size_t kCoeLen = 2;
  static constexpr size_t kMaxFl = 0x3FFF;           // 14-bit FL field
  static constexpr size_t kEthHlen = 14;             // ETH_HLEN / ETHER_HDR_LEN
  static constexpr size_t kLinuxMaxFl = 1514 + 12;   // ETH_FRAME_LEN + FCS + COE + VLAN
  static constexpr size_t kFreeBsdMaxFl = 2048 - 2;  // MCLBYTES - ETHER_ALIGN

  struct Params {
    UsbNetDriver driver = UsbNetDriver::kLinux;  // whose rx parsing rules decode() follows
    // RX checksum offload: a 2-byte COE word follows the FCS. On by default in both drivers
    // (Linux smsc95xx_bind sets NETIF_F_RXCSUM, DEFAULT_RX_CSUM_ENABLE; FreeBSD enables
    // IFCAP_RXCSUM; §4.2 step 6).
    bool rx_coe = true;
    // Encoder writes the real Ethernet FCS (CRC-32); false writes 00 00 00 00, which is
    // cheaper and enough for size-only models (neither driver checks the FCS).
    bool compute_fcs = true;
    Validation validate() const;
  };

  // What the device reports with a frame (encoder input).
  struct Status {
    uint32_t flags = 0;  // status bits other than FL, e.g. kRxStsEs | kRxStsCrc (FL is computed)
    uint16_t csum = 0;   // COE word written after the FCS when rx_coe (the device's checksum;
                         // carried, not computed here)
  };

  // A good frame as the decoder hands it to the sink.
  struct Frame {
    std::span<const uint8_t> data;  // Ethernet frame, FCS and COE word removed
    uint32_t status = 0;            // the raw RX status word
    uint16_t csum = 0;              // the COE word, read little-endian (0 if rx_coe is off)
  };

  // What one decode() call found. Counters follow the OS counters they mirror.
  struct Result {
    uint32_t frames = 0;         // good frames handed to the sink
    uint64_t frame_bytes = 0;    // their bytes (without FCS / COE word)
    uint32_t error_frames = 0;   // status words with ES: skipped (Linux rx_errors + rx_dropped)
    uint32_t crc_errors = 0;     // Linux rx_crc_errors (ES frames with CRC error)
    uint32_t frame_errors = 0;   // Linux rx_frame_errors (ES frames with TL or RF, no CRC)
    uint32_t length_errors = 0;  // Linux rx_length_errors (ES with LE && !FT, no CRC; usbnet)
    uint32_t rx_errors = 0;      // how much the interface's input-error counter rises
    FramingAbort abort = FramingAbort::kNone;  // why the rest of the transfer was dropped
    uint32_t dropped_bytes = 0;                // bytes of the transfer left unparsed by the abort
  };

  struct Stats {
    uint64_t transfers = 0;
    uint64_t transfer_bytes = 0;
    uint64_t frames = 0;
    uint64_t frame_bytes = 0;
    uint64_t error_frames = 0;
    uint64_t crc_errors = 0;
    uint64_t frame_errors = 0;
    uint64_t length_errors = 0;
    uint64_t rx_errors = 0;
    uint64_t aborted_transfers = 0;
    uint64_t dropped_bytes = 0;
    void add(size_t transfer_size, const Result& r);
  };

  Smsc95xxRx() : Smsc95xxRx(Params{}) {}
  explicit Smsc95xxRx(const Params& params);

  // --- Device side ---
  // Bytes encode_frame would append to a transfer of `transfer_size` bytes for a frame of
  // `frame_len` bytes (without FCS): alignment padding before the status word (when the
  // transfer does not end on a 4-byte boundary), status, RXDOFF pad, frame, FCS, COE word.
  size_t append_size(size_t transfer_size, size_t frame_len) const {
    return (4 - transfer_size % 4) % 4 + kStatusLen + kRxDataOffset + frame_len + trailer_len();
  }
  // Appends one frame (given without FCS). Returns false, appending nothing, if FL would not
  // fit its 14-bit field.
  bool encode_frame(std::span<const uint8_t> frame, const Status& status,
                    std::vector<uint8_t>& transfer) const;
  bool encode_frame(std::span<const uint8_t> frame, std::vector<uint8_t>& transfer) const {
    return encode_frame(frame, Status{}, transfer);
  }

  // --- Driver side ---
  // Parses one completed bulk-IN transfer; calls sink(const Frame&) or
  // sink(std::span<const uint8_t>) for every good frame, in order.
  template <class Sink>
  Result decode(std::span<const uint8_t> transfer, Sink&& sink) {
    Result r = params_.driver == UsbNetDriver::kFreeBsd ? decode_freebsd(transfer, sink)
                                                        : decode_linux(transfer, sink);
    stats_.add(transfer.size(), r);
    return r;
  }

  size_t trailer_len() const { return kFcsLen + (params_.rx_coe ? kCoeLen : 0); }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

 private:
  template <class Sink>
  Result decode_linux(std::span<const uint8_t> t, Sink& sink) const;
  template <class Sink>
  Result decode_freebsd(std::span<const uint8_t> t, Sink& sink) const;
  Frame make_frame(std::span<const uint8_t> t, size_t frame_start, size_t size,
                   uint32_t header) const;

  Params params_;
  Stats stats_;
};

class Smsc95xxTx {
 public:
  // TX command words (Linux smsc95xx.h TX_CMD_*; §4.5).
  static constexpr uint32_t kTxCmdADataOffset = 0x1Fu << 16;  // bits 20:16
  static constexpr uint32_t kTxCmdADataOffsetShift = 16;
  static constexpr uint32_t kTxCmdAFirstSeg = 1u << 13;
  static constexpr uint32_t kTxCmdALastSeg = 1u << 12;
  static constexpr uint32_t kTxCmdABufSize = 0x7FFu;  // bits 10:0
  static constexpr uint32_t kTxCmdBCsumEnable = 1u << 14;
  static constexpr uint32_t kTxCmdBAddCrcDisable = 1u << 13;
  static constexpr uint32_t kTxCmdBDisablePadding = 1u << 12;
  static constexpr uint32_t kTxCmdBPktByteLength = 0x7FFu;  // bits 10:0

  static constexpr size_t kOverhead = 8;       // SMSC95XX_TX_OVERHEAD (TX_CMD_A + TX_CMD_B)
  static constexpr size_t kOverheadCsum = 12;  // SMSC95XX_TX_OVERHEAD_CSUM (+ preamble word)
  static constexpr size_t kPreambleLen = 4;
  static constexpr size_t kMaxBufSize = 0x7FF;
  static constexpr size_t kCsumMinLen = 46;  // smsc95xx_can_tx_checksum: skb->len <= 45 -> sw

  struct Params {
    // TX checksum offload: Linux advertises it (DEFAULT_TX_CSUM_ENABLE); FreeBSD does not
    // implement it (set false). When off, checksum requests are served in software.
    bool tx_coe = true;
    Validation validate() const;
  };

  // The stack's checksum request for one frame (skb->ip_summed == CHECKSUM_PARTIAL with
  // skb_checksum_start_offset and csum_offset, both from the start of the frame).
  struct Offload {
    bool partial = false;
    uint16_t csum_start = 0;
    uint16_t csum_offset = 0;  // from csum_start to the 16-bit checksum field
  };

  // A frame as the device-side decoder hands it to the sink.
  struct Frame {
    std::span<const uint8_t> data;  // Ethernet frame (no FCS; the MAC appends it)
    uint32_t tx_cmd_a = 0;
    uint32_t tx_cmd_b = 0;
    bool csum = false;         // TX_CMD_B.CSUM_ENABLE: the device inserts a checksum
    uint16_t csum_start = 0;   // preamble bits 15:0
    uint16_t csum_insert = 0;  // preamble bits 31:16
  };

  struct Result {
    uint32_t frames = 0;
    uint64_t frame_bytes = 0;
    uint32_t csum_frames = 0;  // frames with a checksum preamble
    FramingAbort abort = FramingAbort::kNone;
    uint32_t dropped_bytes = 0;
  };

  struct Stats {
    uint64_t transfers = 0;
    uint64_t transfer_bytes = 0;
    uint64_t frames = 0;
    uint64_t frame_bytes = 0;
    uint64_t csum_frames = 0;
    uint64_t aborted_transfers = 0;
    uint64_t dropped_bytes = 0;
    void add(size_t transfer_size, const Result& r);
  };

  Smsc95xxTx() : Smsc95xxTx(Params{}) {}
  explicit Smsc95xxTx(const Params& params);

  // --- Driver side ---
  // Whether encode_frame would use the checksum preamble for this request
  // (tx_coe && partial && smsc95xx_can_tx_checksum).
  bool uses_preamble(size_t frame_len, const Offload& offload) const;
  // Bytes encode_frame would append to a transfer of `transfer_size` bytes.
  size_t append_size(size_t transfer_size, size_t frame_len, const Offload& offload) const {
    return (4 - transfer_size % 4) % 4 + frame_len +
           (uses_preamble(frame_len, offload) ? kOverheadCsum : kOverhead);
  }
  size_t append_size(size_t transfer_size, size_t frame_len) const {
    return (4 - transfer_size % 4) % 4 + frame_len + kOverhead;
  }
  // Appends TX_CMD_A, TX_CMD_B, [preamble], frame. A software checksum (if requested but not
  // offloaded) is written into the copied bytes. Returns false, appending nothing, if the
  // buffer size would not fit its 11-bit field or the checksum offsets lie outside the frame.
  bool encode_frame(std::span<const uint8_t> frame, const Offload& offload,
                    std::vector<uint8_t>& transfer) const;
  bool encode_frame(std::span<const uint8_t> frame, std::vector<uint8_t>& transfer) const {
    return encode_frame(frame, Offload{}, transfer);
  }

  // --- Device side ---
  // Parses one bulk-OUT transfer; calls sink(const Frame&) or sink(std::span<const uint8_t>)
  // per frame. Malformed command words or a frame running past the data drop the rest.
  template <class Sink>
  Result decode(std::span<const uint8_t> transfer, Sink&& sink);

  // What the hardware does for a frame with CSUM_ENABLE: writes internet_checksum of
  // frame[csum_start..end) at frame[csum_insert] (big-endian). Returns false if out of range.
  static bool insert_checksum(std::span<uint8_t> frame, uint16_t csum_start, uint16_t csum_insert);

  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

 private:
  Params params_;
  Stats stats_;
};

// ---------------------------------------------------------------------------------------
// Decoders (inline: the sink is a template parameter).

inline Smsc95xxRx::Frame Smsc95xxRx::make_frame(std::span<const uint8_t> t, size_t frame_start,
                                                size_t size, uint32_t header) const {
  Frame f;
  f.data = t.subspan(frame_start, size - trailer_len());
  f.status = header;
  if (params_.rx_coe) {
    f.csum = usb_framing::load_le16(t.data() + frame_start + size - kCoeLen);
  }
  return f;
}

template <class Sink>
Smsc95xxRx::Result Smsc95xxRx::decode_linux(std::span<const uint8_t> t, Sink& sink) const {
  using usb_framing::load_le32;
  Result r;
  const size_t n = t.size();
  // rx_fixup returns 0 -> usbnet rx_process counts one rx_error; the rest is dropped.
  auto abort = [&r, n](FramingAbort why, size_t off) {
    r.abort = why;
    r.dropped_bytes = static_cast<uint32_t>(n - off);
    ++r.rx_errors;
    return r;
  };
  if (n < kEthHlen) {  // "This check is no longer done by usbnet"
    return abort(FramingAbort::kShortTransfer, 0);
  }
  const size_t trailer = trailer_len();
  size_t off = 0;
  while (off < n) {
    if (n - off < kStatusLen + kRxDataOffset) {
      return abort(FramingAbort::kTruncated, off);
    }
    const uint32_t header = load_le32(t.data() + off);
    const size_t frame_start = off + kStatusLen + kRxDataOffset;  // skb_pull(4 + NET_IP_ALIGN)
    const size_t size = (header & kRxStsFl) >> kRxStsFlShift;
    const size_t align_count = (4 - ((size + kRxDataOffset) % 4)) % 4;
    const size_t left = n - frame_start;
    if (size > left) {  // 2023: "Limit packet length to skb->len"
      return abort(FramingAbort::kTruncated, off);
    }
    if ((header & kRxStsEs) != 0) {
      ++r.error_frames;  // rx_errors++, rx_dropped++
      ++r.rx_errors;
      if ((header & kRxStsCrc) != 0) {
        ++r.crc_errors;
      } else {
        if ((header & (kRxStsTl | kRxStsRf)) != 0) {
          ++r.frame_errors;
        }
        if ((header & kRxStsLe) != 0 && (header & kRxStsFt) == 0) {
          ++r.length_errors;
        }
      }
    } else {
      if (size > kLinuxMaxFl) {
        return abort(FramingAbort::kOversize, off);
      }
      if (size < trailer) {  // deviation: Linux would trim nothing and deliver garbage
        return abort(FramingAbort::kBadLength, off);
      }
      const Frame f = make_frame(t, frame_start, size, header);
      if (size == left) {
        // Last frame: rx_fixup trims the URB skb itself and returns 1; usbnet delivers it
        // unless it is shorter than ETH_HLEN (then: rx_errors++, rx_length_errors++).
        if (f.data.size() < kEthHlen) {
          ++r.rx_errors;
          ++r.length_errors;
        } else {
          ++r.frames;
          r.frame_bytes += f.data.size();
          usb_framing::deliver(sink, f);
        }
        return r;
      }
      ++r.frames;
      r.frame_bytes += f.data.size();
      usb_framing::deliver(sink, f);  // skb_clone + usbnet_skb_return
    }
    off = frame_start + size;
    if (n - off >= align_count) {  // skb_pull(align_count) fails (no-op) on too little data
      off += align_count;
    }
  }
  // The loop consumed the whole URB (it ended with an ES frame or padding): usbnet sees an
  // empty skb, "rx length 0".
  ++r.rx_errors;
  ++r.length_errors;
  return r;
}

template <class Sink>
Smsc95xxRx::Result Smsc95xxRx::decode_freebsd(std::span<const uint8_t> t, Sink& sink) const {
  using usb_framing::load_le32;
  Result r;
  const size_t n = t.size();
  // Every early exit in smsc_bulk_read_callback is a silent "goto tr_setup".
  auto abort = [&r, n](FramingAbort why, size_t off) {
    r.abort = why;
    r.dropped_bytes = static_cast<uint32_t>(n - off);
    return r;
  };
  if (n < kStatusLen + kFcsLen) {  // "always a zero length frame after bringing the IF up"
    return abort(FramingAbort::kShortTransfer, 0);
  }
  const size_t coe = params_.rx_coe ? kCoeLen : 0;
  size_t off = 0;
  while (off < n) {
    off = (off + 3) & ~size_t{3};  // the status word is always 4-byte aligned
    if (off >= n) {
      break;
    }
    if (n - off < kStatusLen) {
      return abort(FramingAbort::kTruncated, off);
    }
    const uint32_t header = load_le32(t.data() + off);
    const size_t header_off = off;
    off += kStatusLen + kRxDataOffset;
    const size_t pktlen = (header & kRxStsFl) >> kRxStsFlShift;
    if ((header & kRxStsEs) != 0) {
      ++r.error_frames;  // IFCOUNTER_IERRORS
      ++r.rx_errors;
    } else {
      if (pktlen < kEthHlen || off > n || pktlen > n - off) {
        return abort(pktlen < kEthHlen ? FramingAbort::kBadLength : FramingAbort::kTruncated,
                     header_off);
      }
      if (pktlen > kFreeBsdMaxFl) {
        return abort(FramingAbort::kOversize, header_off);
      }
      if (pktlen - coe < kFcsLen + kEthHlen) {  // "Remove 4 trailing bytes"
        return abort(FramingAbort::kBadLength, header_off);
      }
      const Frame f = make_frame(t, off, pktlen, header);
      ++r.frames;
      r.frame_bytes += f.data.size();
      usb_framing::deliver(sink, f);
    }
    off += pktlen;
  }
  return r;
}

template <class Sink>
Smsc95xxTx::Result Smsc95xxTx::decode(std::span<const uint8_t> transfer, Sink&& sink) {
  using usb_framing::load_le32;
  Result r;
  const size_t n = transfer.size();
  auto finish = [&](FramingAbort why, size_t off) {
    r.abort = why;
    r.dropped_bytes = static_cast<uint32_t>(n - off);
    stats_.add(n, r);
    return r;
  };
  size_t off = 0;
  while (true) {
    off = (off + 3) & ~size_t{3};  // command words are 4-byte aligned (inferred)
    if (off >= n) {
      break;
    }
    if (n - off < kOverhead) {
      return finish(FramingAbort::kTruncated, off);
    }
    Frame f;
    f.tx_cmd_a = load_le32(transfer.data() + off);
    f.tx_cmd_b = load_le32(transfer.data() + off + 4);
    const size_t buf_size = f.tx_cmd_a & kTxCmdABufSize;
    const size_t data_offset = (f.tx_cmd_a & kTxCmdADataOffset) >> kTxCmdADataOffsetShift;
    const size_t pkt_len = f.tx_cmd_b & kTxCmdBPktByteLength;
    f.csum = (f.tx_cmd_b & kTxCmdBCsumEnable) != 0;
    const size_t min_buf = f.csum ? kPreambleLen + 1 : 1;
    if ((f.tx_cmd_a & kTxCmdAFirstSeg) == 0 || (f.tx_cmd_a & kTxCmdALastSeg) == 0 ||
        buf_size != pkt_len || buf_size < min_buf) {
      return finish(FramingAbort::kBadHeader, off);
    }
    const size_t start = off + kOverhead + data_offset;
    if (start > n || buf_size > n - start) {
      return finish(FramingAbort::kTruncated, off);
    }
    size_t data_start = start;
    if (f.csum) {
      const uint32_t csum_preamble = load_le32(transfer.data() + start);
      f.csum_start = static_cast<uint16_t>(csum_preamble & 0xFFFF);
      f.csum_insert = static_cast<uint16_t>(csum_preamble >> 16);
      const size_t len = buf_size - kPreambleLen;
      if (f.csum_start >= len || static_cast<size_t>(f.csum_insert) + 2 > len) {
        return finish(FramingAbort::kBadHeader, off);
      }
      data_start += kPreambleLen;
      ++r.csum_frames;
    }
    f.data = transfer.subspan(data_start, start + buf_size - data_start);
    ++r.frames;
    r.frame_bytes += f.data.size();
    usb_framing::deliver(sink, f);
    off = start + buf_size;
  }
  stats_.add(n, r);
  return r;
}

}  // namespace nicsim::algo
