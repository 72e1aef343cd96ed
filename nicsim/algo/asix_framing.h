#pragma once
// Asix framing — the byte layout of the bulk transfers of ASIX AX88178 / AX88772 USB Ethernet
// chips, as encoders (what the device or the driver writes) and decoders (what the other side
// parses).
//
// RX (bulk-IN, docs/mechanisms/asix.md §5.2). Each frame is preceded by a 4-byte header: 16-bit
// little-endian length, then its 16-bit one's complement; the frame (no FCS) is padded to an
// even length. The device packs frames back to back up to its burst size (MFB) and a frame may
// straddle transfer boundaries. AsixRx::decode follows
//   Linux asix_rx_fixup_internal (default, UsbNetDriver::kLinux): the header is checked on
//   its low 11 bits (length == ~complement & 0x7FF) and length <= MTU + 14 + 4; state kept
//   across transfers (`remaining` bytes of a frame in progress, a split 2-byte header half,
//   the partial frame) so frames may straddle transfers; at the start of a transfer that
//   continues a frame, the header expected after it is checked first and a bad one drops the
//   partial frame ("Data Header synchronisation was lost"); a bad header, a bad length or an
//   offset that does not end exactly at the transfer end resets the state, counts one
//   rx_error (usbnet) and drops the rest of the transfer.
//   FreeBSD axe_rx_frame (UsbNetDriver::kFreeBsd): each transfer is parsed on its own; the
//   full 16-bit check (len ^ ilen == 0xFFFF, "lost sync"), a header or frame running past
//   the data stop parsing and count one input error; frames shorter than 14 or longer than
//   2046 bytes (axe_rxeof) count an input error each and are skipped.
// TX (bulk-OUT, §5.3). The same 4-byte header before each frame, no padding between frames
// (FreeBSD packs up to 16 frames back to back; Linux sends one per transfer). If a frame ends
// exactly on a bulk max-packet boundary of the transfer (header + frame a multiple of 512 at
// high speed for a one-frame transfer), a dummy header 00 00 FF FF (length 0, complement
// 0xFFFF) is appended so the transfer does not end on a packet boundary.
//
// Units: bytes. Encoders append to a caller-owned std::vector<uint8_t>: for RX it is the
// device's byte stream (cut it into transfers of at most the burst size; a cut may fall
// inside a frame), for TX one bulk transfer. append_size() gives sizes without encoding.
// Decoders never read outside the given span and do not allocate after construction; the
// sink gets a span into the transfer, or for a frame reassembled across transfers (Linux)
// into the decoder's own buffer — valid until the next decode()/reset(). No clock, no I/O.
// Deviations (docs/algorithms/asix_framing.md): where Linux reads a few bytes past the URB
// data (a 3-byte header tail; the synchronisation peek after an odd remainder) this decoder
// treats the header as bad or skips the peek; allocation failure (Linux keeps parsing but
// drops the frame) is not modelled; the AX88772B 6-byte checksum header is not supported;
// the device-side TX decoder (the chip's parsing) is inferred: full 16-bit check, dummy
// headers skipped, one transfer at a time.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "nicsim/algo/usb_framing_common.h"
#include "nicsim/core/param_error.h"

namespace nicsim::algo {

class AsixRx {
 public:
  static constexpr size_t kHeaderLen = 4;
  static constexpr uint32_t kLinuxLenMask = 0x7FF;    // asix_rx_fixup_internal: 11 bits
  static constexpr size_t kEthHlen = 14;              // ETH_HLEN
  static constexpr size_t kVlanHlen = 4;              // VLAN_HLEN
  static constexpr size_t kFreeBsdMaxLen = 2048 - 2;  // axe_rxeof: MCLBYTES - ETHER_ALIGN
  static constexpr size_t kMaxFrameLen = 0xFFFF;      // 16-bit length field

  struct Params {
    UsbNetDriver driver = UsbNetDriver::kLinux;  // whose rx parsing rules decode() follows
    // Linux drops a frame longer than mtu + ETH_HLEN + VLAN_HLEN (1518 at the default
    // ETH_DATA_LEN 1500). Unused by the FreeBSD rules (bounded by the mbuf cluster).
    int64_t mtu = 1500;
    Validation validate() const;
  };

  struct Frame {
    std::span<const uint8_t> data;  // the Ethernet frame (the chip strips the FCS)
  };

  struct Result {
    uint32_t frames = 0;  // frames handed to the sink
    uint64_t frame_bytes = 0;
    uint32_t error_frames = 0;      // FreeBSD: frames < 14 or > 2046 bytes, skipped
    uint32_t rx_errors = 0;         // how much the interface's input-error counter rises
    uint32_t sync_resets = 0;       // Linux: "Data Header synchronisation was lost"
    uint32_t dropped_partials = 0;  // Linux: partial frames discarded by a state reset
    FramingAbort abort = FramingAbort::kNone;
    uint32_t dropped_bytes = 0;  // bytes of the transfer left unparsed by the abort
  };

  struct Stats {
    uint64_t transfers = 0;
    uint64_t transfer_bytes = 0;
    uint64_t frames = 0;
    uint64_t frame_bytes = 0;
    uint64_t error_frames = 0;
    uint64_t rx_errors = 0;
    uint64_t sync_resets = 0;
    uint64_t dropped_partials = 0;
    uint64_t aborted_transfers = 0;
    uint64_t dropped_bytes = 0;
    void add(size_t transfer_size, const Result& r);
  };

  AsixRx() : AsixRx(Params{}) {}
  explicit AsixRx(const Params& params);

  // --- Device side ---
  // Bytes encode_frame appends: header, frame, one pad byte if the frame length is odd.
  static constexpr size_t append_size(size_t frame_len) {
    return kHeaderLen + frame_len + (frame_len & 1);
  }
  // Appends header + frame + even padding to the device's RX byte stream. Returns false,
  // appending nothing, if the frame is longer than 0xFFFF bytes.
  bool encode_frame(std::span<const uint8_t> frame, std::vector<uint8_t>& stream) const;

  // --- Driver side ---
  // Parses one completed bulk-IN transfer; calls sink(const Frame&) or
  // sink(std::span<const uint8_t>) for every complete frame, in order.
  template <class Sink>
  Result decode(std::span<const uint8_t> transfer, Sink&& sink) {
    Result r = params_.driver == UsbNetDriver::kFreeBsd ? decode_freebsd(transfer, sink)
                                                        : decode_linux(transfer, sink);
    stats_.add(transfer.size(), r);
    return r;
  }

  // reset_asix_rx_fixup_info: forget a frame in progress (e.g. on link reset).
  void reset();
  // Linux reassembly state: bytes still expected of the frame in progress, and whether the
  // last transfer ended with the first half of a header.
  size_t remaining() const { return remaining_; }
  bool split_head() const { return split_head_; }

  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

 private:
  template <class Sink>
  Result decode_linux(std::span<const uint8_t> t, Sink& sink);
  template <class Sink>
  Result decode_freebsd(std::span<const uint8_t> t, Sink& sink) const;
  void reset_counting(Result& r);

  Params params_;
  size_t max_size_;  // mtu + ETH_HLEN + VLAN_HLEN
  // struct asix_rx_fixup_info
  uint32_t header_ = 0;
  uint16_t remaining_ = 0;
  bool split_head_ = false;
  bool partial_ = false;         // ax_skb_ holds the start of a frame from an earlier transfer
  std::vector<uint8_t> ax_skb_;  // capacity reserved once: the longest 11-bit frame
  Stats stats_;
};

class AsixTx {
 public:
  static constexpr size_t kHeaderLen = 4;
  static constexpr uint32_t kDummyHeader = 0xFFFF0000u;  // padbytes: 00 00 FF FF on the wire
  static constexpr size_t kMaxFrameLen = 0xFFFF;

  struct Params {
    // Bulk-OUT max packet size (dev->maxpacket): 512 at high speed, 64 at full speed (§6.1).
    // FreeBSD axe hard-codes 512.
    int64_t max_packet = 512;
    Validation validate() const;
  };

  struct Frame {
    std::span<const uint8_t> data;
  };

  struct Result {
    uint32_t frames = 0;
    uint64_t frame_bytes = 0;
    uint32_t dummy_headers = 0;
    FramingAbort abort = FramingAbort::kNone;
    uint32_t dropped_bytes = 0;
  };

  struct Stats {
    uint64_t transfers = 0;
    uint64_t transfer_bytes = 0;
    uint64_t frames = 0;
    uint64_t frame_bytes = 0;
    uint64_t dummy_headers = 0;
    uint64_t aborted_transfers = 0;
    uint64_t dropped_bytes = 0;
    void add(size_t transfer_size, const Result& r);
  };

  AsixTx() : AsixTx(Params{}) {}
  explicit AsixTx(const Params& params);

  // --- Driver side ---
  // Bytes encode_frame would append to a transfer of `transfer_size` bytes: header + frame,
  // plus the 4-byte dummy header if the transfer would then end on a max-packet boundary.
  size_t append_size(size_t transfer_size, size_t frame_len) const {
    const size_t end = transfer_size + kHeaderLen + frame_len;
    return kHeaderLen + frame_len + (end % max_packet_ == 0 ? kHeaderLen : 0);
  }
  // Appends header (len, ~len), frame and, if needed, the dummy header. Returns false,
  // appending nothing, for an empty frame or one longer than 0xFFFF bytes.
  bool encode_frame(std::span<const uint8_t> frame, std::vector<uint8_t>& transfer) const;

  // --- Device side ---
  // Parses one bulk-OUT transfer; calls sink(const Frame&) or sink(std::span<const uint8_t>)
  // per frame. A bad header or a frame running past the data drops the rest.
  template <class Sink>
  Result decode(std::span<const uint8_t> transfer, Sink&& sink);

  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

 private:
  Params params_;
  size_t max_packet_;
  Stats stats_;
};

// ---------------------------------------------------------------------------------------
// Decoders (inline: the sink is a template parameter).

template <class Sink>
AsixRx::Result AsixRx::decode_linux(std::span<const uint8_t> t, Sink& sink) {
  using usb_framing::load_le16;
  using usb_framing::load_le32;
  Result r;
  const size_t n = t.size();
  const uint8_t* data = t.data();
  // rx_fixup returns 0: reset_asix_rx_fixup_info, usbnet counts one rx_error.
  auto fail = [&r, n, this](FramingAbort why, size_t at) {
    reset_counting(r);
    r.abort = why;
    r.dropped_bytes = static_cast<uint32_t>(at < n ? n - at : 0);
    ++r.rx_errors;
    return r;
  };
  auto bad_header = [](uint32_t header) {
    return (header & kLinuxLenMask) != ((~header >> 16) & kLinuxLenMask);
  };

  size_t offset = 0;
  // A frame continues from the previous transfer: check the header that should follow it.
  if (remaining_ != 0 && remaining_ + kHeaderLen <= n) {
    const size_t peek = (static_cast<size_t>(remaining_) + 1) & ~size_t{1};
    if (peek + kHeaderLen <= n && bad_header(load_le32(data + peek))) {
      ++r.sync_resets;
      reset_counting(r);
    }
  }

  while (offset + 2 <= n) {
    if (remaining_ == 0) {
      const size_t header_at = offset;
      if (n - offset == 2) {  // first half of a header: keep it for the next transfer
        header_ = load_le16(data + offset);
        split_head_ = true;
        offset += 2;
        break;
      }
      if (split_head_) {
        header_ |= static_cast<uint32_t>(load_le16(data + offset)) << 16;
        split_head_ = false;
        offset += 2;
      } else {
        if (n - offset < kHeaderLen) {  // 3 bytes: Linux would read one past the data
          return fail(FramingAbort::kBadHeader, header_at);
        }
        header_ = load_le32(data + offset);
        offset += kHeaderLen;
      }
      const size_t size = header_ & kLinuxLenMask;
      if (bad_header(header_)) {  // "Bad Header Length"
        return fail(FramingAbort::kBadHeader, header_at);
      }
      if (size > max_size_) {  // "Bad RX Length"
        return fail(FramingAbort::kOversize, header_at);
      }
      remaining_ = static_cast<uint16_t>(size);
      partial_ = false;
      ax_skb_.clear();
      if (size == 0) {  // Linux hands an empty skb to the stack
        ++r.frames;
        usb_framing::deliver(sink, Frame{t.subspan(offset, 0)});
        continue;
      }
    }
    size_t copy_length;
    if (remaining_ > n - offset) {
      copy_length = n - offset;
      remaining_ = static_cast<uint16_t>(remaining_ - copy_length);
    } else {
      copy_length = remaining_;
      remaining_ = 0;
    }
    const std::span<const uint8_t> piece = t.subspan(offset, copy_length);
    if (remaining_ == 0 && !partial_) {
      ++r.frames;  // the whole frame is in this transfer: no copy needed
      r.frame_bytes += piece.size();
      usb_framing::deliver(sink, Frame{piece});
    } else {
      ax_skb_.insert(ax_skb_.end(), piece.begin(), piece.end());  // skb_put_data
      partial_ = true;
      if (remaining_ == 0) {
        ++r.frames;
        r.frame_bytes += ax_skb_.size();
        usb_framing::deliver(sink, Frame{std::span<const uint8_t>(ax_skb_)});
        partial_ = false;
      }
    }
    offset += (copy_length + 1) & ~size_t{1};
  }

  if (offset != n) {  // "Bad SKB Length"
    return fail(FramingAbort::kBadEnd, offset);
  }
  return r;
}

template <class Sink>
AsixRx::Result AsixRx::decode_freebsd(std::span<const uint8_t> t, Sink& sink) const {
  using usb_framing::load_le16;
  Result r;
  const size_t n = t.size();
  auto fail = [&r, n](FramingAbort why, size_t at) {  // error = EINVAL: one input error
    r.abort = why;
    r.dropped_bytes = static_cast<uint32_t>(n - at);
    ++r.rx_errors;
    return r;
  };
  size_t pos = 0;
  while (pos < n) {
    if (n - pos < kHeaderLen) {  // "too little data"
      return fail(FramingAbort::kTruncated, pos);
    }
    const uint16_t len = load_le16(t.data() + pos);
    const uint16_t ilen = load_le16(t.data() + pos + 2);
    if ((len ^ ilen) != 0xFFFF) {  // "we lost sync"
      return fail(FramingAbort::kBadHeader, pos);
    }
    if (len > n - pos - kHeaderLen) {  // "invalid length"
      return fail(FramingAbort::kTruncated, pos);
    }
    pos += kHeaderLen;
    if (len < kEthHlen || len > kFreeBsdMaxLen) {  // axe_rxeof: IERRORS, frame skipped
      ++r.error_frames;
      ++r.rx_errors;
    } else {
      ++r.frames;
      r.frame_bytes += len;
      usb_framing::deliver(sink, Frame{t.subspan(pos, len)});
    }
    pos += len + (len % 2);
  }
  return r;
}

template <class Sink>
AsixTx::Result AsixTx::decode(std::span<const uint8_t> transfer, Sink&& sink) {
  using usb_framing::load_le16;
  Result r;
  const size_t n = transfer.size();
  auto finish = [&](FramingAbort why, size_t at) {
    r.abort = why;
    r.dropped_bytes = static_cast<uint32_t>(n - at);
    stats_.add(n, r);
    return r;
  };
  size_t off = 0;
  while (off < n) {
    if (n - off < kHeaderLen) {
      return finish(FramingAbort::kTruncated, off);
    }
    const uint16_t len = load_le16(transfer.data() + off);
    const uint16_t ilen = load_le16(transfer.data() + off + 2);
    if ((len ^ ilen) != 0xFFFF) {
      return finish(FramingAbort::kBadHeader, off);
    }
    if (len > n - off - kHeaderLen) {
      return finish(FramingAbort::kTruncated, off);
    }
    off += kHeaderLen;
    if (len == 0) {
      ++r.dummy_headers;
      continue;
    }
    ++r.frames;
    r.frame_bytes += len;
    usb_framing::deliver(sink, Frame{transfer.subspan(off, len)});
    off += len;
  }
  stats_.add(n, r);
  return r;
}

}  // namespace nicsim::algo
