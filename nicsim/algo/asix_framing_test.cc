// Asix framing: pins the AX88178/AX88772 bulk-transfer byte layout (docs/mechanisms/asix.md §5.2
// RX, §5.3 TX) and how Linux asix_rx_fixup_internal and FreeBSD axe_rx_frame parse it.
#include "nicsim/algo/asix_framing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace nicsim::algo {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes pattern(size_t len, uint8_t seed = 0) {
  Bytes b(len);
  for (size_t i = 0; i < len; ++i) {
    b[i] = static_cast<uint8_t>(seed + i * 7);
  }
  return b;
}

Bytes random_frame(std::mt19937_64& rng, size_t len) {
  Bytes b(len);
  for (auto& x : b) {
    x = static_cast<uint8_t>(rng());
  }
  return b;
}

Bytes slice(const Bytes& b, size_t from, size_t to) {
  return Bytes(b.begin() + static_cast<std::ptrdiff_t>(from),
               b.begin() + static_cast<std::ptrdiff_t>(to));
}

// Decodes `transfer` (copied into an exact-size buffer) and appends every frame to `out`.
AsixRx::Result decode_into(AsixRx& rx, const Bytes& transfer, std::vector<Bytes>& out) {
  return rx.decode(transfer,
                   [&out](std::span<const uint8_t> f) { out.emplace_back(f.begin(), f.end()); });
}

// --- RX: exact layout ----------------------------------------------------------------------

TEST(AsixRx, HandBuiltLayout) {
  // §5.2: 16-bit LE length, 16-bit LE one's complement, frame, pad to even.
  AsixRx rx;
  const Bytes a = pattern(61, 1);
  const Bytes b = pattern(14, 2);
  Bytes s;
  ASSERT_TRUE(rx.encode_frame(a, s));
  ASSERT_EQ(s.size(), 66u);  // 4 + 61 + 1 pad
  ASSERT_TRUE(rx.encode_frame(b, s));
  ASSERT_EQ(s.size(), 84u);                                    // + 4 + 14
  EXPECT_EQ(slice(s, 0, 4), (Bytes{0x3D, 0x00, 0xC2, 0xFF}));  // 61, ~61
  EXPECT_EQ(slice(s, 4, 65), a);
  EXPECT_EQ(s[65], 0);
  EXPECT_EQ(slice(s, 66, 70), (Bytes{0x0E, 0x00, 0xF1, 0xFF}));  // 14, ~14
  EXPECT_EQ(slice(s, 70, 84), b);
  EXPECT_EQ(AsixRx::append_size(61), 66u);
  EXPECT_EQ(AsixRx::append_size(14), 18u);

  for (UsbNetDriver d : {UsbNetDriver::kLinux, UsbNetDriver::kFreeBsd}) {
    AsixRx dec({.driver = d});
    std::vector<Bytes> got;
    const auto r = decode_into(dec, s, got);
    EXPECT_EQ(got, (std::vector<Bytes>{a, b}));
    EXPECT_EQ(r.frames, 2u);
    EXPECT_EQ(r.frame_bytes, 75u);
    EXPECT_EQ(r.rx_errors, 0u);
    EXPECT_EQ(r.abort, FramingAbort::kNone);
  }
}

// --- RX: round trips -----------------------------------------------------------------------

TEST(AsixRx, RoundTripLinuxAcrossTransferBoundaries) {
  // §5.2 Linux: the device's byte stream cut into transfers at any even offset (inside a
  // header, inside a frame) is reassembled exactly.
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    std::mt19937_64 rng(seed);
    AsixRx rx;
    const size_t n = 1 + rng() % 16;
    std::vector<Bytes> frames;
    Bytes stream;
    size_t expected = 0;
    for (size_t i = 0; i < n; ++i) {
      frames.push_back(random_frame(rng, 14 + rng() % 1501));
      expected += AsixRx::append_size(frames.back().size());
      ASSERT_TRUE(rx.encode_frame(frames.back(), stream));
    }
    ASSERT_EQ(stream.size(), expected);
    std::vector<Bytes> got;
    size_t pos = 0;
    while (pos < stream.size()) {
      // Even transfer sizes of 4..2048 bytes, and sometimes a full 2048 (MFB_2048).
      size_t len = (rng() % 4 == 0) ? 2048 : 4 + 2 * (rng() % 1023);
      len = std::min(len, stream.size() - pos);
      const auto r = decode_into(rx, slice(stream, pos, pos + len), got);
      ASSERT_EQ(r.rx_errors, 0u) << "seed " << seed << " at " << pos;
      pos += len;
    }
    EXPECT_EQ(got, frames) << "seed " << seed;
    EXPECT_EQ(rx.remaining(), 0u);
    EXPECT_FALSE(rx.split_head());
  }
}

TEST(AsixRx, RoundTripWholeTransfersBothDrivers) {
  // §5.2: frames packed whole into one transfer parse under both drivers' rules.
  for (UsbNetDriver d : {UsbNetDriver::kLinux, UsbNetDriver::kFreeBsd}) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      std::mt19937_64 rng(seed);
      AsixRx rx({.driver = d});
      std::vector<Bytes> frames;
      Bytes t;
      const size_t n = 1 + rng() % 10;
      for (size_t i = 0; i < n; ++i) {
        frames.push_back(random_frame(rng, 14 + rng() % 1501));
        rx.encode_frame(frames.back(), t);
      }
      std::vector<Bytes> got;
      const auto r = decode_into(rx, t, got);
      EXPECT_EQ(got, frames);
      EXPECT_EQ(r.rx_errors, 0u);
    }
  }
}

// --- RX: Linux reassembly state ------------------------------------------------------------

TEST(AsixRx, LinuxReassemblesSplitHeaderAndSplitPayload) {
  // §5.2 Linux: keeps `remaining`, a split 2-byte header half and the partial frame across
  // URBs.
  AsixRx rx;
  const Bytes a = pattern(100, 1);
  const Bytes b = pattern(200, 2);
  const Bytes c = pattern(31, 3);
  Bytes s;
  rx.encode_frame(a, s);  // [0, 104)
  rx.encode_frame(b, s);  // header [104, 108), data [108, 308)
  rx.encode_frame(c, s);  // header [308, 312), data [312, 343), pad 343
  ASSERT_EQ(s.size(), 344u);
  std::vector<Bytes> got;

  auto r = decode_into(rx, slice(s, 0, 106), got);  // a + first half of b's header
  EXPECT_EQ(got, (std::vector<Bytes>{a}));
  EXPECT_TRUE(rx.split_head());
  EXPECT_EQ(r.rx_errors, 0u);

  r = decode_into(rx, slice(s, 106, 206), got);  // header tail + 98 bytes of b
  EXPECT_FALSE(rx.split_head());
  EXPECT_EQ(rx.remaining(), 102u);
  EXPECT_EQ(got.size(), 1u);

  r = decode_into(rx, slice(s, 206, 310), got);  // 102 bytes: b ends; c's header starts
  EXPECT_EQ(got, (std::vector<Bytes>{a, b}));
  EXPECT_TRUE(rx.split_head());
  EXPECT_EQ(r.sync_resets, 0u);

  r = decode_into(rx, slice(s, 310, 344), got);
  EXPECT_EQ(got, (std::vector<Bytes>{a, b, c}));
  EXPECT_EQ(rx.remaining(), 0u);
  EXPECT_EQ(rx.stats().frames, 3u);
  EXPECT_EQ(rx.stats().rx_errors, 0u);
}

TEST(AsixRx, LinuxSyncCheckDropsThePartialFrame) {
  // §5.2 Linux: when a URB continues a frame, the header expected after it is checked first;
  // if it is bad the partial frame is discarded and the URB is parsed from its start.
  AsixRx rx;
  Bytes s1;
  rx.encode_frame(pattern(100, 1), s1);
  std::vector<Bytes> got;
  decode_into(rx, slice(s1, 0, 54), got);  // 50 bytes of the frame still to come
  ASSERT_EQ(rx.remaining(), 50u);
  Bytes s2;  // the device restarted: a fresh stream
  const Bytes c = pattern(60, 0x40);
  rx.encode_frame(c, s2);
  const auto r = decode_into(rx, s2, got);
  EXPECT_EQ(r.sync_resets, 1u);
  EXPECT_EQ(r.dropped_partials, 1u);
  EXPECT_EQ(got, (std::vector<Bytes>{c}));
  EXPECT_EQ(r.rx_errors, 0u);
}

TEST(AsixRx, LinuxOddTransferEndInsideAFrameIsBadSkbLength) {
  // §5.2 Linux: errors reset the reassembly state and drop the rest of the URB.
  // asix_rx_fixup_internal advances by (copy_length + 1) & ~1: an odd-sized piece at the end
  // of a URB overshoots it -> "Bad SKB Length": reset, one rx_error.
  AsixRx rx;
  Bytes s;
  rx.encode_frame(pattern(100), s);
  std::vector<Bytes> got;
  const auto r = decode_into(rx, slice(s, 0, 55), got);
  EXPECT_EQ(r.abort, FramingAbort::kBadEnd);
  EXPECT_EQ(r.rx_errors, 1u);
  EXPECT_EQ(r.dropped_partials, 1u);
  EXPECT_EQ(rx.remaining(), 0u);
}

TEST(AsixRx, LinuxTwoByteTransferAfterASplitHeaderLosesTheFirstHalf) {
  // §5.2 Linux split 2-byte header half.
  // Pins a Linux quirk: a URB of exactly 2 bytes at a header position is always stored as a
  // first half, even when it is the second half of a split header, so sync is lost.
  AsixRx rx;
  Bytes s;
  rx.encode_frame(pattern(100, 1), s);
  rx.encode_frame(pattern(60, 2), s);
  std::vector<Bytes> got;
  decode_into(rx, slice(s, 0, 106), got);
  ASSERT_TRUE(rx.split_head());
  auto r = decode_into(rx, slice(s, 106, 108), got);
  EXPECT_TRUE(rx.split_head());
  EXPECT_EQ(r.rx_errors, 0u);
  r = decode_into(rx, slice(s, 108, s.size()), got);
  EXPECT_EQ(r.abort, FramingAbort::kBadHeader);
  EXPECT_EQ(r.rx_errors, 1u);
  EXPECT_EQ(got.size(), 1u);
}

TEST(AsixRx, ResetForgetsAFrameInProgress) {
  // §5.2 Linux reassembly state (reset_asix_rx_fixup_info).
  AsixRx rx;
  Bytes s;
  rx.encode_frame(pattern(100, 1), s);
  const Bytes c = pattern(40, 5);
  rx.encode_frame(c, s);
  std::vector<Bytes> got;
  decode_into(rx, slice(s, 0, 50), got);
  EXPECT_EQ(rx.remaining(), 54u);
  rx.reset();
  EXPECT_EQ(rx.remaining(), 0u);
  decode_into(rx, slice(s, 104, s.size()), got);
  EXPECT_EQ(got, (std::vector<Bytes>{c}));
}

// --- RX: errors ----------------------------------------------------------------------------

TEST(AsixRx, DesyncCountsOneErrorAndDropsTheRest) {
  // §5.2: a bad complement -> one error, the rest of the transfer dropped, Linux state reset.
  const Bytes a = pattern(100, 1);
  Bytes t;
  AsixRx enc;
  enc.encode_frame(a, t);
  const size_t bad_at = t.size();
  enc.encode_frame(pattern(60, 2), t);
  enc.encode_frame(pattern(70, 3), t);
  t[bad_at + 2] ^= 0x01;  // complement no longer matches
  for (UsbNetDriver d : {UsbNetDriver::kLinux, UsbNetDriver::kFreeBsd}) {
    AsixRx rx({.driver = d});
    std::vector<Bytes> got;
    const auto r = decode_into(rx, t, got);
    EXPECT_EQ(got, (std::vector<Bytes>{a}));
    EXPECT_EQ(r.abort, FramingAbort::kBadHeader);
    EXPECT_EQ(r.rx_errors, 1u);
    EXPECT_EQ(r.dropped_bytes, t.size() - bad_at);
    EXPECT_EQ(rx.stats().aborted_transfers, 1u);
  }
}

TEST(AsixRx, LinuxChecks11BitsFreeBsdChecks16) {
  // §5.2: Linux compares bits 10:0 of length and complement; FreeBSD all 16 bits.
  Bytes t;
  AsixRx enc;
  enc.encode_frame(pattern(60), t);
  t[1] |= 0x08;  // length 0x083C: bit 11 set, complement still ~0x003C
  AsixRx linux_rx;
  std::vector<Bytes> got;
  auto r = decode_into(linux_rx, t, got);
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].size(), 60u);
  EXPECT_EQ(r.rx_errors, 0u);
  AsixRx bsd({.driver = UsbNetDriver::kFreeBsd});
  got.clear();
  r = decode_into(bsd, t, got);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(r.abort, FramingAbort::kBadHeader);
  EXPECT_EQ(r.rx_errors, 1u);
}

TEST(AsixRx, LengthLimits) {
  // §5.2 length limit.
  // Linux: size > mtu + ETH_HLEN + VLAN_HLEN (1518) -> error, rest dropped.
  // FreeBSD axe_rxeof: len < 14 or > 2046 -> one input error, frame skipped, parsing goes on.
  AsixRx enc;
  Bytes t;
  enc.encode_frame(pattern(1518, 1), t);
  enc.encode_frame(pattern(1519, 2), t);
  enc.encode_frame(pattern(13, 3), t);
  enc.encode_frame(pattern(2047, 4), t);
  enc.encode_frame(pattern(64, 5), t);
  AsixRx linux_rx;
  std::vector<size_t> sizes;
  auto sink = [&sizes](std::span<const uint8_t> f) { sizes.push_back(f.size()); };
  auto r = linux_rx.decode(t, sink);
  EXPECT_EQ(sizes, (std::vector<size_t>{1518}));
  EXPECT_EQ(r.abort, FramingAbort::kOversize);
  EXPECT_EQ(r.rx_errors, 1u);
  EXPECT_EQ(r.dropped_bytes, t.size() - 1522);

  AsixRx jumbo({.mtu = 2029});  // 2029 + 18 = 2047: 1519 passes
  sizes.clear();
  r = jumbo.decode(slice(t, 0, 1522 + 1524), sink);
  EXPECT_EQ(sizes, (std::vector<size_t>{1518, 1519}));

  AsixRx bsd({.driver = UsbNetDriver::kFreeBsd});
  sizes.clear();
  r = bsd.decode(t, sink);
  EXPECT_EQ(sizes, (std::vector<size_t>{1518, 1519, 64}));
  EXPECT_EQ(r.error_frames, 2u);
  EXPECT_EQ(r.rx_errors, 2u);
  EXPECT_EQ(r.abort, FramingAbort::kNone);
}

TEST(AsixRx, TruncatedFrame) {
  // §5.2: FreeBSD "len must fit in the remaining data" vs Linux straddling frames.
  // FreeBSD: "invalid length" (frame past the data) -> error; Linux keeps it as a frame in
  // progress for the next URB.
  AsixRx enc;
  Bytes t;
  enc.encode_frame(pattern(50, 1), t);
  enc.encode_frame(pattern(100, 2), t);
  const Bytes part = slice(t, 0, 54 + 40);
  AsixRx bsd({.driver = UsbNetDriver::kFreeBsd});
  std::vector<Bytes> got;
  auto r = decode_into(bsd, part, got);
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(r.abort, FramingAbort::kTruncated);
  EXPECT_EQ(r.rx_errors, 1u);
  EXPECT_EQ(r.dropped_bytes, 40u);
  AsixRx linux_rx;
  got.clear();
  r = decode_into(linux_rx, part, got);
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(r.rx_errors, 0u);
  EXPECT_EQ(linux_rx.remaining(), 64u);
}

TEST(AsixRx, LeftoverBytesAtAHeaderPosition) {
  // §5.2 desync handling at the end of a transfer.
  AsixRx enc;
  Bytes t;
  enc.encode_frame(pattern(50), t);
  // Linux: 3 bytes cannot hold a header (Linux would read one past the data): bad header.
  Bytes three = t;
  three.insert(three.end(), {0x10, 0x00, 0xEF});
  AsixRx linux_rx;
  std::vector<Bytes> got;
  auto r = decode_into(linux_rx, three, got);
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(r.abort, FramingAbort::kBadHeader);
  EXPECT_EQ(r.dropped_bytes, 3u);
  // Linux: 1 byte left: the loop stops short of the end -> "Bad SKB Length".
  Bytes one = t;
  one.push_back(0);
  r = decode_into(linux_rx, one, got);
  EXPECT_EQ(r.abort, FramingAbort::kBadEnd);
  EXPECT_EQ(r.dropped_bytes, 1u);
  // FreeBSD: "too little data".
  AsixRx bsd({.driver = UsbNetDriver::kFreeBsd});
  r = decode_into(bsd, three, got);
  EXPECT_EQ(r.abort, FramingAbort::kTruncated);
  EXPECT_EQ(r.rx_errors, 1u);
}

TEST(AsixRx, ZeroLengthHeader) {
  // §5.2/§5.3: a 00 00 FF FF header announces length 0.
  // Linux hands an empty skb up for a zero-length header; FreeBSD counts it as an error.
  Bytes t = {0x00, 0x00, 0xFF, 0xFF};
  AsixRx enc;
  const Bytes a = pattern(20);
  enc.encode_frame(a, t);
  AsixRx linux_rx;
  std::vector<Bytes> got;
  auto r = decode_into(linux_rx, t, got);
  EXPECT_EQ(got, (std::vector<Bytes>{Bytes{}, a}));
  EXPECT_EQ(r.rx_errors, 0u);
  AsixRx bsd({.driver = UsbNetDriver::kFreeBsd});
  got.clear();
  r = decode_into(bsd, t, got);
  EXPECT_EQ(got, (std::vector<Bytes>{a}));
  EXPECT_EQ(r.error_frames, 1u);
}

TEST(AsixRx, TransferSizesOfFullSizeFrames) {
  // §5.2: a full-size frame costs 4 + 1514 = 1518 bytes; even lengths need no pad. A 16 KiB
  // burst (MFB_16384, FreeBSD) carries 10 whole frames and 1,204 bytes of the 11th; Linux's
  // 2 KiB URBs (§5.1) need ceil(1518 N / 2048) transfers for N frames.
  AsixRx rx;
  Bytes s;
  for (size_t n = 1; n <= 11; ++n) {
    rx.encode_frame(Bytes(1514), s);
    EXPECT_EQ(s.size(), 1518 * n);
  }
  EXPECT_EQ(16384 / 1518, 10);
  EXPECT_EQ(16384 - 10 * 1518, 1204);
  EXPECT_EQ((s.size() + 2047) / 2048, 9u);  // 11 frames = 16,698 bytes
  EXPECT_EQ((s.size() + 511) / 512, 33u);   // high-speed bulk packets
  EXPECT_EQ(AsixRx::append_size(1513), 1518u);
}

TEST(AsixRx, RejectsBadParams) {
  // §5.2: the Linux limit is MTU + 14 + 4; MTU must be sane.
  auto err = AsixRx::Params{.mtu = 0}.validate();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->key, "mtu");
  EXPECT_THROW(AsixRx({.mtu = -1}), InvalidParams);
  EXPECT_THROW(AsixRx({.mtu = 67}), InvalidParams);
  EXPECT_NO_THROW(AsixRx({.mtu = 68}));
  AsixRx::Params p;
  p.driver = static_cast<UsbNetDriver>(9);
  err = p.validate();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->key, "driver");
  EXPECT_EQ(AsixRx::Params{}.mtu, 1500);
}

// --- TX ------------------------------------------------------------------------------------

TEST(AsixTx, DummyHeaderExactlyOnPacketBoundaries) {
  // §5.3: if header + frame is a multiple of 512, append 00 00 FF FF; no even padding on TX.
  AsixTx tx;
  Bytes t;
  ASSERT_TRUE(tx.encode_frame(pattern(508), t));
  ASSERT_EQ(t.size(), 516u);
  EXPECT_EQ(slice(t, 0, 4), (Bytes{0xFC, 0x01, 0x03, 0xFE}));  // 508, ~508
  EXPECT_EQ(slice(t, 512, 516), (Bytes{0x00, 0x00, 0xFF, 0xFF}));
  Bytes u;
  ASSERT_TRUE(tx.encode_frame(pattern(507), u));
  EXPECT_EQ(u.size(), 511u);  // odd, not padded, no dummy
  Bytes v;
  tx.encode_frame(pattern(1020), v);
  EXPECT_EQ(v.size(), 1028u);
  Bytes w;
  tx.encode_frame(pattern(1514), w);
  EXPECT_EQ(w.size(), 1518u);
  EXPECT_EQ(tx.append_size(0, 508), 516u);
  EXPECT_EQ(tx.append_size(0, 507), 511u);
  // Packed (FreeBSD): the rule applies to the running transfer length.
  Bytes p;
  tx.encode_frame(pattern(500), p);  // 504
  tx.encode_frame(pattern(516), p);  // 504 + 520 = 1024 -> dummy
  EXPECT_EQ(p.size(), 1028u);
  // Full speed: 64-byte packets.
  AsixTx fs({.max_packet = 64});
  Bytes f;
  fs.encode_frame(pattern(60), f);
  EXPECT_EQ(f.size(), 68u);
}

TEST(AsixTx, DeviceDecodeSkipsDummyHeaders) {
  // §5.3: the dummy header carries no frame.
  AsixTx tx;
  std::vector<Bytes> frames = {pattern(508, 1), pattern(100, 2), pattern(4, 3), pattern(1514, 4)};
  Bytes t;
  for (const auto& f : frames) {
    tx.encode_frame(f, t);
  }
  std::vector<Bytes> got;
  const auto r =
      tx.decode(t, [&got](std::span<const uint8_t> f) { got.emplace_back(f.begin(), f.end()); });
  EXPECT_EQ(got, frames);
  EXPECT_EQ(r.dummy_headers, 1u);
  EXPECT_EQ(r.abort, FramingAbort::kNone);
}

TEST(AsixTx, RoundTripRandomFrames) {
  // §5.3: frames packed back to back (FreeBSD) with dummy headers where needed.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    AsixTx tx;
    std::vector<Bytes> frames;
    Bytes t;
    size_t expected = 0;
    const size_t n = 1 + rng() % 16;
    for (size_t i = 0; i < n; ++i) {
      frames.push_back(random_frame(rng, 14 + rng() % 1501));
      expected += tx.append_size(expected, frames.back().size());
      tx.encode_frame(frames.back(), t);
    }
    EXPECT_EQ(t.size(), expected);
    std::vector<Bytes> got;
    tx.decode(t, [&got](std::span<const uint8_t> f) { got.emplace_back(f.begin(), f.end()); });
    EXPECT_EQ(got, frames);
  }
}

TEST(AsixTx, MalformedTransfers) {
  // §5.3 header check on the device side (inferred, see docs); encoder refusals.
  AsixTx tx;
  Bytes t;
  tx.encode_frame(pattern(60), t);
  const size_t second = t.size();
  tx.encode_frame(pattern(70), t);
  Bytes bad = t;
  bad[second + 3] ^= 0x80;
  size_t frames = 0;
  auto count = [&frames](std::span<const uint8_t>) { ++frames; };
  auto r = tx.decode(bad, count);
  EXPECT_EQ(frames, 1u);
  EXPECT_EQ(r.abort, FramingAbort::kBadHeader);
  EXPECT_EQ(r.dropped_bytes, bad.size() - second);
  r = tx.decode(slice(t, 0, t.size() - 1), count);
  EXPECT_EQ(r.abort, FramingAbort::kTruncated);
  r = tx.decode(slice(t, 0, second + 3), count);
  EXPECT_EQ(r.abort, FramingAbort::kTruncated);
  EXPECT_EQ(tx.stats().aborted_transfers, 3u);
  Bytes none;
  EXPECT_FALSE(tx.encode_frame(Bytes(), none));
  EXPECT_FALSE(tx.encode_frame(Bytes(0x10000), none));
  EXPECT_TRUE(none.empty());
}

TEST(AsixTx, RejectsBadParams) {
  // §5.3/§6.1: bulk max packet size 512 (HS) / 64 (FS).
  for (int64_t mp : {0, -512, 100, 2048}) {
    const auto err = AsixTx::Params{.max_packet = mp}.validate();
    ASSERT_TRUE(err) << mp;
    EXPECT_EQ(err->key, "max_packet");
    EXPECT_THROW(AsixTx({.max_packet = mp}), InvalidParams);
  }
  EXPECT_NO_THROW(AsixTx({.max_packet = 64}));
}

// --- Fuzz seed corpus ------------------------------------------------------------------------
// nicsim/algo/fuzz_corpus/asix_framing/ holds seeds for asix_framing_fuzz. Byte 0 is the
// fuzzer's configuration (bit 0 FreeBSD, bits 7:1 transfer-size selector); the rest is a byte
// stream, a transfer or frame material. This test pins the committed seeds to the encoders;
// run it with NICSIM_WRITE_FUZZ_CORPUS=1 to rewrite them.

std::vector<std::pair<std::string, Bytes>> corpus_seeds() {
  std::vector<std::pair<std::string, Bytes>> seeds;
  AsixRx rx;
  AsixTx tx;
  {
    Bytes t = {0x40};
    rx.encode_frame(pattern(60, 1), t);
    rx.encode_frame(pattern(61, 2), t);
    rx.encode_frame(pattern(100, 3), t);
    seeds.emplace_back("rx_stream", t);
  }
  {
    Bytes t = {0x01};
    rx.encode_frame(pattern(64, 4), t);
    rx.encode_frame(pattern(1514, 5), t);
    seeds.emplace_back("rx_freebsd_full", t);
  }
  {
    Bytes t = {0x00};
    tx.encode_frame(pattern(507, 6), t);
    tx.encode_frame(pattern(1, 7), t);  // 511 + 5 = 516: no dummy
    Bytes u = {0x00};
    tx.encode_frame(pattern(508, 8), u);  // dummy
    seeds.emplace_back("tx_packed", t);
    seeds.emplace_back("tx_dummy", u);
  }
  {
    Bytes t = {0x10, 46, 0};
    const Bytes a = pattern(60, 8);
    t.insert(t.end(), a.begin(), a.end());
    t.insert(t.end(), {0xDC, 0x05});
    const Bytes b = pattern(200, 9);
    t.insert(t.end(), b.begin(), b.end());
    seeds.emplace_back("frames", t);
  }
  return seeds;
}

TEST(AsixFramingFuzzCorpus, SeedsMatchTheEncoders) {
  // §5.2/§5.3 streams and transfers as produced by the encoders.
  const auto dir = std::filesystem::path(NICSIM_ALGO_FUZZ_CORPUS_DIR) / "asix_framing";
  const bool write = std::getenv("NICSIM_WRITE_FUZZ_CORPUS") != nullptr;
  if (write) {
    std::filesystem::create_directories(dir);
  }
  for (const auto& [name, bytes] : corpus_seeds()) {
    const auto path = dir / name;
    if (write) {
      std::ofstream(path, std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()),
                 static_cast<std::streamsize>(bytes.size()));
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << path << " missing (run with NICSIM_WRITE_FUZZ_CORPUS=1)";
    const Bytes on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(on_disk, bytes) << path;
  }
}

}  // namespace
}  // namespace nicsim::algo
