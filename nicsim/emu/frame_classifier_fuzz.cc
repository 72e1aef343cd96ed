// libFuzzer target: arbitrary bytes as a frame read from a host (untrusted: any program in the
// namespaces can send anything). classify_frame / classify / rss_flow_of / write_ecn /
// tcp_gro_base / gro_segment must never read or write outside the frame, write_ecn must keep a
// valid IPv4 header checksum valid, and a super-frame's segments' payloads must add up to its own.
// Run with scripts/fuzz.sh (seed corpus: nicsim/emu/fuzz_corpus/frame_classifier/).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "nicsim/core/packet.h"
#include "nicsim/emu/frame_classifier.h"

namespace {

uint16_t header_sum(const std::vector<uint8_t>& b, size_t off, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) {
    sum += static_cast<uint32_t>((b[off + i] << 8) | b[off + i + 1]);
  }
  while (sum >> 16) {
    sum = (sum & 0xffff) + (sum >> 16);
  }
  return static_cast<uint16_t>(sum);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nicsim;
  const emu::FrameInfo info = emu::classify_frame(std::span<const uint8_t>(data, size));
  nicsim::Packet p;
  p.payload.reset(new PayloadBuffer{std::vector<uint8_t>(data, data + size)});
  p.len = static_cast<uint32_t>(size);
  emu::classify(p);
  if (p.tos != info.tos || p.flow_hash != info.flow_hash) {
    std::abort();  // the two entry points disagree
  }
  const algo::Rss::Flow flow = emu::rss_flow_of(std::span<const uint8_t>(data, size));
  if (!info.ipv4 && (flow.src_ip != 0 || flow.dst_ip != 0)) {
    std::abort();  // addresses read from a frame that is not IPv4
  }
  const uint32_t segment_bytes[] = {0, 1514, static_cast<uint32_t>(size % 70000)};
  for (const uint32_t seg : segment_bytes) {
    const auto base = emu::tcp_gro_base(std::span<const uint8_t>(data, size), seg);
    if (!base) {
      continue;
    }
    const uint32_t n = base->segments();
    uint64_t payload = 0;
    for (uint32_t i = 0; i < n && i < 100; ++i) {
      payload += emu::gro_segment(*base, i).payload;
    }
    if (n == 0 || (n <= 100 && payload != base->total_payload)) {
      std::abort();  // segments that do not add up to the super-frame
    }
  }
  if (info.ipv4) {
    const size_t ihl = static_cast<size_t>(data[info.ip_offset] & 0x0f) * 4;
    const bool valid = header_sum(p.payload->bytes, info.ip_offset, ihl) == 0xffff;
    p.set_ce();
    emu::write_ecn(p);
    if (valid && header_sum(p.payload->bytes, info.ip_offset, ihl) != 0xffff) {
      std::abort();  // the incremental update broke a valid checksum
    }
  }
  return 0;
}
