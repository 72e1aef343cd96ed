#include "nicsim/algo/smsc95xx_framing.h"

#include <array>
#include <cstring>

namespace nicsim::algo {
namespace {

using CrcTables = std::array<std::array<uint32_t, 256>, 8>;

// Slicing-by-8 tables for the reflected CRC-32 polynomial 0xEDB88320.
constexpr CrcTables make_crc_tables() {
  CrcTables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) {
      c = (c & 1u) != 0 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (size_t s = 1; s < 8; ++s) {
      t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFFu];
    }
  }
  return t;
}

constexpr CrcTables kCrcTables = make_crc_tables();

}  // namespace

uint32_t ethernet_crc32(std::span<const uint8_t> data) {
  using usb_framing::load_le32;
  const auto& t = kCrcTables;
  uint32_t crc = 0xFFFFFFFFu;
  const uint8_t* p = data.data();
  size_t n = data.size();
  while (n >= 8) {
    const uint32_t lo = load_le32(p) ^ crc;
    const uint32_t hi = load_le32(p + 4);
    crc = t[7][lo & 0xFFu] ^ t[6][(lo >> 8) & 0xFFu] ^ t[5][(lo >> 16) & 0xFFu] ^ t[4][lo >> 24] ^
          t[3][hi & 0xFFu] ^ t[2][(hi >> 8) & 0xFFu] ^ t[1][(hi >> 16) & 0xFFu] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    crc = (crc >> 8) ^ t[0][(crc ^ *p) & 0xFFu];
    ++p;
    --n;
  }
  return ~crc;
}

uint16_t internet_checksum(std::span<const uint8_t> data) {
  uint64_t sum = 0;
  size_t i = 0;
  for (; i + 1 < data.size(); i += 2) {
    sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
  }
  if (i < data.size()) {
    sum += static_cast<uint32_t>(data[i] << 8);
  }
  while ((sum >> 16) != 0) {
    sum = (sum & 0xFFFFu) + (sum >> 16);
  }
  return static_cast<uint16_t>(~sum);
}

// --- Smsc95xxRx ----------------------------------------------------------------------------

Validation Smsc95xxRx::Params::validate() const {
  if (!usb_framing::valid(driver)) {
    return ParamError{"driver",
                      "must be linux or freebsd, got " + std::to_string(static_cast<int>(driver))};
  }
  return std::nullopt;
}

Smsc95xxRx::Smsc95xxRx(const Params& params) : params_(require_valid(params)) {}

void Smsc95xxRx::Stats::add(size_t transfer_size, const Result& r) {
  ++transfers;
  transfer_bytes += transfer_size;
  frames += r.frames;
  frame_bytes += r.frame_bytes;
  error_frames += r.error_frames;
  crc_errors += r.crc_errors;
  frame_errors += r.frame_errors;
  length_errors += r.length_errors;
  rx_errors += r.rx_errors;
  aborted_transfers += r.abort != FramingAbort::kNone ? 1 : 0;
  dropped_bytes += r.dropped_bytes;
}

bool Smsc95xxRx::encode_frame(std::span<const uint8_t> frame, const Status& status,
                              std::vector<uint8_t>& transfer) const {
  using usb_framing::store_le16;
  using usb_framing::store_le32;
  const size_t size = frame.size() + trailer_len();  // FL counts frame + FCS [+ COE]
  if (size > kMaxFl) {
    return false;
  }
  const size_t old_size = transfer.size();
  const size_t align = (4 - old_size % 4) % 4;
  transfer.resize(old_size + append_size(old_size, frame.size()));
  uint8_t* p = transfer.data() + old_size;
  std::memset(p, 0, align);
  p += align;
  const uint32_t header =
      (status.flags & ~kRxStsFl) | (static_cast<uint32_t>(size) << kRxStsFlShift);
  store_le32(p, header);
  p[4] = 0;  // RXDOFF pad
  p[5] = 0;
  p += kStatusLen + kRxDataOffset;
  if (!frame.empty()) {
    std::memcpy(p, frame.data(), frame.size());
  }
  p += frame.size();
  store_le32(p, params_.compute_fcs ? ethernet_crc32(frame) : 0u);
  p += kFcsLen;
  if (params_.rx_coe) {
    store_le16(p, status.csum);
  }
  return true;
}

// --- Smsc95xxTx ----------------------------------------------------------------------------

Validation Smsc95xxTx::Params::validate() const { return std::nullopt; }

Smsc95xxTx::Smsc95xxTx(const Params& params) : params_(require_valid(params)) {}

void Smsc95xxTx::Stats::add(size_t transfer_size, const Result& r) {
  ++transfers;
  transfer_bytes += transfer_size;
  frames += r.frames;
  frame_bytes += r.frame_bytes;
  csum_frames += r.csum_frames;
  aborted_transfers += r.abort != FramingAbort::kNone ? 1 : 0;
  dropped_bytes += r.dropped_bytes;
}

bool Smsc95xxTx::uses_preamble(size_t frame_len, const Offload& offload) const {
  if (!params_.tx_coe || !offload.partial) {
    return false;
  }
  // smsc95xx_can_tx_checksum: len = skb->len - csum_start; hardware checksum only if
  // skb->len > 45 and csum_offset < len - (4 + 1).
  if (frame_len < kCsumMinLen || offload.csum_start >= frame_len) {
    return false;
  }
  const size_t len = frame_len - offload.csum_start;
  return len > 5 && offload.csum_offset < len - 5;
}

bool Smsc95xxTx::insert_checksum(std::span<uint8_t> frame, uint16_t csum_start,
                                 uint16_t csum_insert) {
  if (csum_start >= frame.size() || static_cast<size_t>(csum_insert) + 2 > frame.size()) {
    return false;
  }
  const uint16_t csum = internet_checksum(frame.subspan(csum_start));
  frame[csum_insert] = static_cast<uint8_t>(csum >> 8);
  frame[csum_insert + 1u] = static_cast<uint8_t>(csum);
  return true;
}

bool Smsc95xxTx::encode_frame(std::span<const uint8_t> frame, const Offload& offload,
                              std::vector<uint8_t>& transfer) const {
  using usb_framing::store_le32;
  const size_t len = frame.size();
  if (offload.partial &&
      (offload.csum_start >= len ||
       static_cast<size_t>(offload.csum_start) + offload.csum_offset + 2 > len)) {
    return false;  // checksum field outside the frame
  }
  const bool csum = uses_preamble(len, offload);
  const size_t buf_size = len + (csum ? kPreambleLen : 0);
  if (len == 0 || buf_size > kMaxBufSize) {
    return false;
  }
  const size_t old_size = transfer.size();
  const size_t align = (4 - old_size % 4) % 4;
  transfer.resize(old_size + append_size(old_size, len, offload));
  uint8_t* p = transfer.data() + old_size;
  std::memset(p, 0, align);
  p += align;
  uint32_t tx_cmd_b = static_cast<uint32_t>(buf_size);
  const uint32_t tx_cmd_a = tx_cmd_b | kTxCmdAFirstSeg | kTxCmdALastSeg;
  if (csum) {
    tx_cmd_b |= kTxCmdBCsumEnable;
  }
  store_le32(p, tx_cmd_a);
  store_le32(p + 4, tx_cmd_b);
  p += kOverhead;
  if (csum) {
    // smsc95xx_calc_csum_preamble: low 16 = csum start, high 16 = start + csum_offset.
    const uint32_t csum_preamble =
        (static_cast<uint32_t>(offload.csum_start + offload.csum_offset) << 16) |
        offload.csum_start;
    store_le32(p, csum_preamble);
    p += kPreambleLen;
  }
  std::memcpy(p, frame.data(), len);
  if (offload.partial && !csum) {
    // Hardware checksum unusable (short frame, field near the end, or no TX COE): the driver
    // computes it in software into the frame.
    insert_checksum(std::span<uint8_t>(p, len), offload.csum_start,
                    static_cast<uint16_t>(offload.csum_start + offload.csum_offset));
  }
  return true;
}

}  // namespace nicsim::algo
