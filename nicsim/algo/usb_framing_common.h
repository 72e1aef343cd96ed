#pragma once
// Shared vocabulary of the USB Ethernet framing codecs (smsc95xx_framing.h, asix_framing.h):
// which host driver's parsing rules a decoder follows, why a decoder dropped the rest of a
// bulk transfer, bounds-checked little-endian loads/stores and the sink dispatch.
// Header-only, no state. See docs/mechanisms §4.4-4.5 (SMSC) and §5.2-5.3 (ASIX).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

namespace nicsim::algo {

// Whose receive-path rules a decoder applies where Linux and FreeBSD differ.
enum class UsbNetDriver : uint8_t {
  kLinux,    // drivers/net/usb/{smsc95xx,asix_common}.c under usbnet (the default)
  kFreeBsd,  // sys/dev/usb/net/{if_smsc,if_axe}.c under uether
};

// Why a decoder stopped parsing a transfer and dropped the rest of it (kNone: it did not).
enum class FramingAbort : uint8_t {
  kNone,
  kShortTransfer,  // transfer shorter than the driver's minimum (smsc95xx: < 14 bytes)
  kTruncated,      // a header or frame runs past the end of the transfer
  kOversize,       // frame length above the driver's limit
  kBadLength,      // frame length below what the driver can strip (FCS, COE word, header)
  kBadHeader,      // ASIX length/complement mismatch (lost sync); SMSC TX bad command words
  kBadEnd,         // ASIX Linux: parsing did not end exactly at the transfer end
};

constexpr std::string_view to_string(FramingAbort a) {
  switch (a) {
    case FramingAbort::kNone:
      return "none";
    case FramingAbort::kShortTransfer:
      return "short_transfer";
    case FramingAbort::kTruncated:
      return "truncated";
    case FramingAbort::kOversize:
      return "oversize";
    case FramingAbort::kBadLength:
      return "bad_length";
    case FramingAbort::kBadHeader:
      return "bad_header";
    case FramingAbort::kBadEnd:
      return "bad_end";
  }
  return "unknown";
}

namespace usb_framing {

// Little-endian loads and stores; the caller guarantees p[0..N) is inside the buffer.
inline uint16_t load_le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t load_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
inline void store_le16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
inline void store_le32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}

constexpr bool valid(UsbNetDriver d) {
  return d == UsbNetDriver::kLinux || d == UsbNetDriver::kFreeBsd;
}

// Hands a decoded frame to a sink: sinks callable with the codec's Frame struct get it,
// others get just the frame bytes (std::span<const uint8_t>).
template <class Sink, class FrameT>
inline void deliver(Sink& sink, const FrameT& f) {
  if constexpr (std::is_invocable_v<Sink&, const FrameT&>) {
    sink(f);
  } else {
    sink(f.data);
  }
}

}  // namespace usb_framing
}  // namespace nicsim::algo
