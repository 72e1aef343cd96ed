// libFuzzer target: arbitrary bytes from the network through every decoder of the live layer
// (the `nicsim server` control protocol, protocol.h, and the UDP probe and flood datagrams,
// probe.h) must never crash, hang, trip a sanitizer or buffer more than one control frame.
// Whatever decodes must re-encode to a frame that decodes to the same message. Run with
// scripts/fuzz.sh (seed corpus: nicsim/live/fuzz_corpus/protocol/).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <variant>
#include <vector>

#include "nicsim/live/probe.h"
#include "nicsim/live/protocol.h"

namespace {

using namespace nicsim::live;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "protocol_fuzz: %s\n", what);
    std::abort();
  }
}

void round_trip(const Message& m) {
  std::vector<uint8_t> out;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Data>) {
          encode_data_header(v.bytes, out);
          out.resize(out.size() + v.bytes);
        } else {
          encode(v, out);
        }
      },
      m);
  const Decoded d = decode_body(std::span<const uint8_t>(out).subspan(4));
  check(d.message.has_value(), "a decoded message does not decode after re-encoding");
  check(*d.message == m, "re-encoding changed a message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> in(data, size);
  // The first byte picks the stream's role and how the bytes are chopped into reads.
  const bool allow_data = size > 0 && (data[0] & 1) != 0;
  const size_t chunk = size > 0 ? 1 + (data[0] >> 1) % 64 : 1;
  FrameReader reader(allow_data);
  size_t at = size > 0 ? 1 : 0;
  while (at < size && !reader.failed()) {
    const size_t n = std::min(chunk, size - at);
    size_t used = 0;
    while (used < n && !reader.failed()) {
      const size_t k = reader.feed(in.subspan(at + used, n - used));
      used += k;
      while (std::optional<Message> m = reader.next()) {
        round_trip(*m);
      }
      if (k == 0 && !reader.failed()) {
        check(reader.next() == std::nullopt, "feed consumed nothing without a pending frame");
        break;
      }
    }
    at += n;
  }
  // The whole input as one frame body.
  const Decoded d = decode_body(in);
  check(d.message.has_value() != !d.error.empty(), "a decode gives a message xor an error");
  if (d.message) {
    round_trip(*d.message);
  }
  // And as a probe datagram.
  if (const std::optional<ProbePacket> p = decode_probe(in)) {
    std::vector<uint8_t> out(size);
    encode_probe(*p, out);
    check(decode_probe(out) == p, "probe round trip");
  }
  // And as a flood datagram (udp_flood / voip).
  if (const std::optional<FloodPacket> f = decode_flood(in)) {
    std::vector<uint8_t> out(size);
    encode_flood(*f, out);
    check(decode_flood(out) == f, "flood round trip");
  }
  return 0;
}
