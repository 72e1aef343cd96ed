#include "nicsim/algo/asix_framing.h"

#include <cstring>
#include <string>

namespace nicsim::algo {
namespace {

// Writes the 4-byte header: length, then its one's complement (both little-endian).
// Linux asix_tx_fixup: packet_len = ((len ^ 0x0000ffff) << 16) + len.
uint8_t* put_header(uint8_t* p, size_t len) {
  const uint32_t packet_len =
      ((static_cast<uint32_t>(len) ^ 0x0000FFFFu) << 16) + static_cast<uint32_t>(len);
  usb_framing::store_le32(p, packet_len);
  return p + AsixRx::kHeaderLen;
}

}  // namespace

// --- AsixRx --------------------------------------------------------------------------------

Validation AsixRx::Params::validate() const {
  if (!usb_framing::valid(driver)) {
    return ParamError{"driver",
                      "must be linux or freebsd, got " + std::to_string(static_cast<int>(driver))};
  }
  // ETH_MIN_MTU .. the AX88178 max_mtu (16384 - ETH_HLEN - VLAN_HLEN).
  if (mtu < 68 || mtu > 16384 - 18) {
    return ParamError{"mtu", "must be in 68..16366, got " + std::to_string(mtu)};
  }
  return std::nullopt;
}

AsixRx::AsixRx(const Params& params)
    : params_(require_valid(params)),
      max_size_(static_cast<size_t>(params.mtu) + kEthHlen + kVlanHlen) {
  ax_skb_.reserve(kLinuxLenMask + 1);  // the longest frame an 11-bit length can announce
}

void AsixRx::Stats::add(size_t transfer_size, const Result& r) {
  ++transfers;
  transfer_bytes += transfer_size;
  frames += r.frames;
  frame_bytes += r.frame_bytes;
  error_frames += r.error_frames;
  rx_errors += r.rx_errors;
  sync_resets += r.sync_resets;
  dropped_partials += r.dropped_partials;
  aborted_transfers += r.abort != FramingAbort::kNone ? 1 : 0;
  dropped_bytes += r.dropped_bytes;
}

void AsixRx::reset() {
  Result ignored;
  reset_counting(ignored);
}

void AsixRx::reset_counting(Result& r) {
  if (remaining_ != 0 || partial_) {
    ++r.dropped_partials;  // "Discard any incomplete Ethernet frame in the netdev buffer"
  }
  remaining_ = 0;
  split_head_ = false;
  header_ = 0;
  partial_ = false;
  ax_skb_.clear();
}

bool AsixRx::encode_frame(std::span<const uint8_t> frame, std::vector<uint8_t>& stream) const {
  const size_t len = frame.size();
  if (len > kMaxFrameLen) {
    return false;
  }
  const size_t old_size = stream.size();
  stream.resize(old_size + append_size(len));
  uint8_t* p = put_header(stream.data() + old_size, len);
  if (len != 0) {
    std::memcpy(p, frame.data(), len);
  }
  if ((len & 1) != 0) {
    p[len] = 0;  // even padding
  }
  return true;
}

// --- AsixTx --------------------------------------------------------------------------------

Validation AsixTx::Params::validate() const {
  if (max_packet < 8 || max_packet > 1024 || (max_packet & (max_packet - 1)) != 0) {
    return ParamError{"max_packet",
                      "must be a power of two in 8..1024, got " + std::to_string(max_packet)};
  }
  return std::nullopt;
}

AsixTx::AsixTx(const Params& params)
    : params_(require_valid(params)), max_packet_(static_cast<size_t>(params.max_packet)) {}

void AsixTx::Stats::add(size_t transfer_size, const Result& r) {
  ++transfers;
  transfer_bytes += transfer_size;
  frames += r.frames;
  frame_bytes += r.frame_bytes;
  dummy_headers += r.dummy_headers;
  aborted_transfers += r.abort != FramingAbort::kNone ? 1 : 0;
  dropped_bytes += r.dropped_bytes;
}

bool AsixTx::encode_frame(std::span<const uint8_t> frame, std::vector<uint8_t>& transfer) const {
  const size_t len = frame.size();
  if (len == 0 || len > kMaxFrameLen) {  // a zero length would read as a dummy header
    return false;
  }
  const size_t old_size = transfer.size();
  const size_t add = append_size(old_size, len);
  transfer.resize(old_size + add);
  uint8_t* p = put_header(transfer.data() + old_size, len);
  std::memcpy(p, frame.data(), len);
  if (add != kHeaderLen + len) {
    usb_framing::store_le32(p + len, kDummyHeader);  // padlen = 4: 00 00 FF FF
  }
  return true;
}

}  // namespace nicsim::algo
