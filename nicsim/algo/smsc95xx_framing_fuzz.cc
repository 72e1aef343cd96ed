// libFuzzer target for the SMSC LAN95xx framing codecs (docs/mechanisms §4.4, §4.5).
// Input: byte 0 configures (bit 0 FreeBSD rules, bit 1 rx_coe, bit 2 tx_coe); the rest is
// (1) decoded as a bulk-IN transfer by Smsc95xxRx and as a bulk-OUT transfer by Smsc95xxTx,
// checking that every frame lies inside the input and the counters agree, and (2) read as
// frame material ([len lo, len hi, bytes...] repeated) whose frames must survive
// encode -> decode unchanged in both directions.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "nicsim/algo/smsc95xx_framing.h"

namespace {

using nicsim::algo::FramingAbort;
using nicsim::algo::Smsc95xxRx;
using nicsim::algo::Smsc95xxTx;
using nicsim::algo::UsbNetDriver;
using Span = std::span<const uint8_t>;

void check(bool ok) {
  if (!ok) {
    std::abort();
  }
}

bool inside(Span part, Span whole) {
  const auto p = reinterpret_cast<uintptr_t>(part.data());
  const auto w = reinterpret_cast<uintptr_t>(whole.data());
  return part.empty() || (p >= w && p + part.size() <= w + whole.size());
}

// Frames of 14..1514 bytes: a 16-bit length prefix picks the size, the bytes after it fill
// the frame (a short tail ends the list).
std::vector<Span> frames_from(Span in) {
  std::vector<Span> frames;
  size_t pos = 0;
  while (in.size() - pos >= 2 + 14 && frames.size() < 64) {
    const size_t len = 14 + (static_cast<size_t>(in[pos] | in[pos + 1] << 8) % 1501);
    pos += 2;
    const size_t take = std::min(len, in.size() - pos);
    frames.push_back(in.subspan(pos, take));
    pos += take;
  }
  return frames;
}

void fuzz_rx(uint8_t cfg, Span in) {
  const Smsc95xxRx::Params params{
      .driver = (cfg & 1) != 0 ? UsbNetDriver::kFreeBsd : UsbNetDriver::kLinux,
      .rx_coe = (cfg & 2) != 0};
  Smsc95xxRx rx(params);
  uint64_t bytes = 0;
  uint32_t frames = 0;
  const auto r = rx.decode(in, [&](const Smsc95xxRx::Frame& f) {
    check(inside(f.data, in));
    bytes += f.data.size();
    ++frames;
  });
  check(frames == r.frames && bytes == r.frame_bytes && bytes <= in.size());
  check(r.dropped_bytes <= in.size());
  check(r.abort != FramingAbort::kNone || r.dropped_bytes == 0);

  // Round trip: encode the frames into one transfer; decode must give them back exactly.
  const auto material = frames_from(in);
  std::vector<uint8_t> t;
  size_t expected_size = 0;
  for (size_t i = 0; i < material.size(); ++i) {
    expected_size += rx.append_size(expected_size, material[i].size());
    check(rx.encode_frame(material[i], {.flags = 0, .csum = static_cast<uint16_t>(i)}, t));
  }
  check(t.size() == expected_size);
  Smsc95xxRx fresh(params);
  size_t i = 0;
  const auto rt = fresh.decode(t, [&](const Smsc95xxRx::Frame& f) {
    check(i < material.size() &&
          std::equal(f.data.begin(), f.data.end(), material[i].begin(), material[i].end()));
    check(!params.rx_coe || f.csum == i);
    ++i;
  });
  check(i == material.size());
  check(material.empty() || (rt.rx_errors == 0 && rt.abort == FramingAbort::kNone));
}

void fuzz_tx(uint8_t cfg, Span in) {
  Smsc95xxTx tx({.tx_coe = (cfg & 4) != 0});
  uint64_t bytes = 0;
  const auto r = tx.decode(in, [&](const Smsc95xxTx::Frame& f) {
    check(inside(f.data, in));
    bytes += f.data.size();
  });
  check(bytes == r.frame_bytes && r.dropped_bytes <= in.size());

  const auto material = frames_from(in);
  std::vector<uint8_t> t;
  for (size_t i = 0; i < material.size(); ++i) {
    // Hardware checksum requests only: the software path rewrites the frame's bytes.
    const Smsc95xxTx::Offload off{
        .partial = tx.params().tx_coe && (i % 2) == 1 && material[i].size() >= 46,
        .csum_start = 14};
    check(tx.encode_frame(material[i], off, t));
  }
  size_t i = 0;
  const auto rt = tx.decode(t, [&](const Smsc95xxTx::Frame& f) {
    check(i < material.size() &&
          std::equal(f.data.begin(), f.data.end(), material[i].begin(), material[i].end()));
    ++i;
  });
  check(i == material.size() && rt.abort == FramingAbort::kNone);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  const Span in(data + 1, size - 1);
  fuzz_rx(data[0], in);
  fuzz_tx(data[0], in);
  return 0;
}
