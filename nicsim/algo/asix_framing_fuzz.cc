// libFuzzer target for the ASIX AX88178/AX88772 framing codecs (docs/mechanisms/asix.md §5.2,
// §5.3). Input: byte 0 configures (bit 0 FreeBSD rules, bits 7:1 a transfer-size selector k);
// the rest is
// (1) cut into transfers of 1 + k bytes and fed to one AsixRx (Linux reassembly state carried
//     across them, or FreeBSD per-transfer parsing), decoded whole as one transfer, and
//     decoded as a bulk-OUT transfer by AsixTx, checking bounds and counters; and
// (2) read as frame material ([len lo, len hi, bytes...] repeated) whose frames must survive
//     encode -> decode unchanged: the RX stream cut at even offsets (4 + 2k bytes) under
//     Linux reassembly, whole under FreeBSD rules, and TX.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "nicsim/algo/asix_framing.h"

namespace {

using nicsim::algo::AsixRx;
using nicsim::algo::AsixTx;
using nicsim::algo::FramingAbort;
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

bool same(Span a, Span b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

void fuzz_raw(UsbNetDriver driver, size_t chunk, Span in) {
  AsixRx rx({.driver = driver});
  for (size_t pos = 0; pos < in.size(); pos += chunk) {
    // Each transfer in its own exact-size heap buffer, so reads past it are caught.
    const std::vector<uint8_t> t(
        in.begin() + static_cast<std::ptrdiff_t>(pos),
        in.begin() + static_cast<std::ptrdiff_t>(std::min(in.size(), pos + chunk)));
    uint64_t bytes = 0;
    const auto r = rx.decode(t, [&](std::span<const uint8_t> f) {
      check(inside(f, t) || f.size() <= AsixRx::kLinuxLenMask);
      bytes += f.size();
    });
    check(bytes == r.frame_bytes && r.dropped_bytes <= t.size());
    check(r.abort != FramingAbort::kNone || r.dropped_bytes == 0);
    check(rx.remaining() <= AsixRx::kLinuxLenMask);
  }
  AsixRx whole({.driver = driver});
  uint64_t bytes = 0;
  const auto r = whole.decode(in, [&](std::span<const uint8_t> f) {
    check(inside(f, in) || (driver == UsbNetDriver::kLinux && f.empty()));
    bytes += f.size();
  });
  check(bytes == r.frame_bytes && bytes <= in.size());

  AsixTx tx;
  bytes = 0;
  const auto rt = tx.decode(in, [&](std::span<const uint8_t> f) {
    check(inside(f, in));
    bytes += f.size();
  });
  check(bytes == rt.frame_bytes && rt.dropped_bytes <= in.size());
}

void fuzz_round_trip(size_t even_chunk, Span in) {
  const auto material = frames_from(in);
  AsixRx linux_rx;
  AsixRx bsd({.driver = UsbNetDriver::kFreeBsd});
  std::vector<uint8_t> stream;
  for (const Span f : material) {
    check(linux_rx.encode_frame(f, stream));
  }
  // Linux: the stream cut at even offsets, reassembled across transfers.
  size_t i = 0;
  auto expect_next = [&](std::span<const uint8_t> f) {
    check(i < material.size() && same(f, material[i]));
    ++i;
  };
  for (size_t pos = 0; pos < stream.size(); pos += even_chunk) {
    const std::vector<uint8_t> t(
        stream.begin() + static_cast<std::ptrdiff_t>(pos),
        stream.begin() + static_cast<std::ptrdiff_t>(std::min(stream.size(), pos + even_chunk)));
    check(linux_rx.decode(t, expect_next).rx_errors == 0);
  }
  check(i == material.size() && linux_rx.remaining() == 0);
  // FreeBSD: whole frames in one transfer.
  i = 0;
  check(bsd.decode(stream, expect_next).rx_errors == 0);
  check(i == material.size());
  // TX: one transfer, dummy headers where a frame ends on a 512-byte boundary.
  AsixTx tx;
  std::vector<uint8_t> t;
  for (const Span f : material) {
    check(tx.encode_frame(f, t));
  }
  i = 0;
  check(tx.decode(t, expect_next).abort == FramingAbort::kNone);
  check(i == material.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  const uint8_t cfg = data[0];
  const Span in(data + 1, size - 1);
  const size_t k = cfg >> 1;
  fuzz_raw((cfg & 1) != 0 ? UsbNetDriver::kFreeBsd : UsbNetDriver::kLinux, 1 + k, in);
  fuzz_round_trip(4 + 2 * k, in);
  return 0;
}
