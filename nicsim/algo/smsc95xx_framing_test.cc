// Smsc95xx framing: pins the LAN95xx bulk-transfer byte layout (docs/mechanisms §4.4 RX,
// §4.5 TX) and how Linux smsc95xx_rx_fixup + usbnet and FreeBSD if_smsc parse it.
#include "nicsim/algo/smsc95xx_framing.h"

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

struct Collected {
  std::vector<Bytes> frames;
  std::vector<uint32_t> status;
  std::vector<uint16_t> csum;
};

Smsc95xxRx::Result decode_all(Smsc95xxRx& rx, const Bytes& transfer, Collected& out) {
  return rx.decode(transfer, [&out](const Smsc95xxRx::Frame& f) {
    out.frames.emplace_back(f.data.begin(), f.data.end());
    out.status.push_back(f.status);
    out.csum.push_back(f.csum);
  });
}

uint32_t le32_at(const Bytes& b, size_t off) {
  return static_cast<uint32_t>(b[off]) | static_cast<uint32_t>(b[off + 1]) << 8 |
         static_cast<uint32_t>(b[off + 2]) << 16 | static_cast<uint32_t>(b[off + 3]) << 24;
}

void put_le32(Bytes& b, size_t off, uint32_t v) {
  for (int i = 0; i < 4; ++i) {
    b[off + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
  }
}

// --- CRC / checksum helpers ----------------------------------------------------------------

TEST(EthernetCrc32, CheckValueAndResidue) {
  // §4.4: the RX FCS is the IEEE 802.3 CRC-32.
  // CRC-32/ISO-HDLC check value; appending the FCS LSB first leaves the 802.3 residue.
  const std::string s = "123456789";
  const Bytes b(s.begin(), s.end());
  EXPECT_EQ(ethernet_crc32(b), 0xCBF43926u);
  for (size_t len : {0u, 1u, 7u, 8u, 9u, 60u, 1514u}) {
    Bytes f = pattern(len, 3);
    const uint32_t fcs = ethernet_crc32(f);
    for (int i = 0; i < 4; ++i) {
      f.push_back(static_cast<uint8_t>(fcs >> (8 * i)));
    }
    EXPECT_EQ(ethernet_crc32(f), 0x2144DF1Cu) << len;
  }
}

TEST(InternetChecksum, HandComputed) {
  // §4.5: the TX software-checksum fallback (csum_fold(csum_partial(...))).
  // 0x0035 + 0x0035 + 0x0008 + 0x1234 = 0x12A6; complement 0xED59.
  const Bytes b = {0x00, 0x35, 0x00, 0x35, 0x00, 0x08, 0x12, 0x34};
  EXPECT_EQ(internet_checksum(b), 0xED59);
  // Odd length: the last byte is the high half of a word; carries fold back in.
  const Bytes c = {0xFF, 0xFF, 0xFF, 0xFF, 0x01};  // 0xFFFF + 0xFFFF + 0x0100 -> 0x0100
  EXPECT_EQ(internet_checksum(c), 0xFEFF);
}

// --- RX: exact layout ----------------------------------------------------------------------

TEST(Smsc95xxRx, HandBuiltLayout) {
  // §4.4: status word (FL bits 29:16), 2 RXDOFF bytes, frame + FCS + COE word, then padding
  // so the next status word is 4-byte aligned.
  Smsc95xxRx rx;  // Linux, rx_coe on, real FCS
  const Bytes a = pattern(61, 1);
  const Bytes b = pattern(14, 2);
  Bytes t;
  ASSERT_TRUE(rx.encode_frame(a, {.flags = Smsc95xxRx::kRxStsBf, .csum = 0xBEEF}, t));
  EXPECT_EQ(t.size(), 73u);  // 4 + 2 + 61 + 4 + 2: the last frame is not padded
  ASSERT_TRUE(rx.encode_frame(b, t));
  ASSERT_EQ(t.size(), 102u);  // 73 + 3 pad + 4 + 2 + 14 + 4 + 2
  // FL = 61 + 4 + 2 = 67 = 0x43; broadcast bit 13 -> 0x00432000, little-endian.
  EXPECT_EQ((Bytes{t.begin(), t.begin() + 6}), (Bytes{0x00, 0x20, 0x43, 0x00, 0x00, 0x00}));
  EXPECT_TRUE(std::equal(a.begin(), a.end(), t.begin() + 6));
  EXPECT_EQ(le32_at(t, 67), ethernet_crc32(a));
  EXPECT_EQ(t[71], 0xEF);  // COE word, little-endian
  EXPECT_EQ(t[72], 0xBE);
  EXPECT_EQ((Bytes{t.begin() + 73, t.begin() + 76}), (Bytes{0, 0, 0}));
  EXPECT_EQ(le32_at(t, 76), 20u << 16);  // FL = 14 + 6
  EXPECT_TRUE(std::equal(b.begin(), b.end(), t.begin() + 82));
  EXPECT_EQ(le32_at(t, 96), ethernet_crc32(b));

  Collected got;
  const auto r = decode_all(rx, t, got);
  ASSERT_EQ(got.frames.size(), 2u);
  EXPECT_EQ(got.frames[0], a);
  EXPECT_EQ(got.frames[1], b);
  EXPECT_EQ(got.status[0], 0x00432000u);
  EXPECT_EQ(got.csum[0], 0xBEEF);
  EXPECT_EQ(r.frames, 2u);
  EXPECT_EQ(r.frame_bytes, 75u);
  EXPECT_EQ(r.rx_errors, 0u);
  EXPECT_EQ(r.abort, FramingAbort::kNone);
}

TEST(Smsc95xxRx, NoCoeAndZeroFcs) {
  // §4.4: without COE, FL = frame + 4; compute_fcs = false writes zeros.
  Smsc95xxRx rx({.rx_coe = false, .compute_fcs = false});
  Bytes t;
  ASSERT_TRUE(rx.encode_frame(pattern(60), t));
  ASSERT_EQ(t.size(), 70u);
  EXPECT_EQ(le32_at(t, 0), 64u << 16);
  EXPECT_EQ(le32_at(t, 66), 0u);
  EXPECT_EQ(rx.append_size(70, 60), 2u + 70u);
}

TEST(Smsc95xxRx, EncodeRejectsFlOverflow) {
  // §4.4: FL is bits 29:16 of the status word.
  // FL is 14 bits: frame + FCS + COE must be <= 16383.
  Smsc95xxRx rx;
  Bytes t = {1, 2};
  EXPECT_TRUE(rx.encode_frame(Bytes(16383 - 6), t));
  const size_t before = t.size();
  EXPECT_FALSE(rx.encode_frame(Bytes(16383 - 5), t));
  EXPECT_EQ(t.size(), before);
}

// --- RX: round trips -----------------------------------------------------------------------

TEST(Smsc95xxRx, RoundTripRandomFrames) {
  // §4.4: 1..N frames of 14..1514 bytes packed in one transfer come back intact, in order,
  // under both drivers' rules, with and without COE.
  for (UsbNetDriver driver : {UsbNetDriver::kLinux, UsbNetDriver::kFreeBsd}) {
    for (bool coe : {true, false}) {
      for (uint64_t seed = 1; seed <= 20; ++seed) {
        std::mt19937_64 rng(seed);
        Smsc95xxRx rx({.driver = driver, .rx_coe = coe});
        const size_t n = 1 + rng() % 12;
        std::vector<Bytes> frames;
        Bytes t;
        size_t expected_size = 0;
        for (size_t i = 0; i < n; ++i) {
          frames.push_back(random_frame(rng, 14 + rng() % 1501));
          expected_size += rx.append_size(expected_size, frames.back().size());
          ASSERT_TRUE(rx.encode_frame(frames.back(), {.csum = static_cast<uint16_t>(i)}, t));
        }
        EXPECT_EQ(t.size(), expected_size);
        Collected got;
        const auto r = decode_all(rx, t, got);
        EXPECT_EQ(got.frames, frames) << "seed " << seed;
        EXPECT_EQ(r.rx_errors, 0u);
        EXPECT_EQ(r.abort, FramingAbort::kNone);
        if (coe) {
          for (size_t i = 0; i < n; ++i) {
            EXPECT_EQ(got.csum[i], i);
          }
        }
      }
    }
  }
}

TEST(Smsc95xxRx, SpanSinkAndStatsAccumulate) {
  // §4.4: a plain span sink gets the frame bytes; stats add up over transfers.
  Smsc95xxRx rx;
  Bytes t;
  rx.encode_frame(pattern(100), t);
  rx.encode_frame(pattern(200), t);
  size_t seen = 0;
  for (int i = 0; i < 3; ++i) {
    rx.decode(t, [&seen](std::span<const uint8_t> f) { seen += f.size(); });
  }
  EXPECT_EQ(seen, 900u);
  EXPECT_EQ(rx.stats().transfers, 3u);
  EXPECT_EQ(rx.stats().transfer_bytes, 3 * t.size());
  EXPECT_EQ(rx.stats().frames, 6u);
  EXPECT_EQ(rx.stats().frame_bytes, 900u);
  EXPECT_EQ(rx.stats().rx_errors, 0u);
}

// --- RX: error handling --------------------------------------------------------------------

TEST(Smsc95xxRx, ErrorSummaryFramesAreSkippedAndCounted) {
  // §4.4 Linux: ES -> rx_errors, rx_dropped (+ crc | frame | length counters), skip; later
  // frames survive.
  Smsc95xxRx rx;
  const Bytes a = pattern(100, 1);
  const Bytes c = pattern(64, 3);
  Bytes t;
  rx.encode_frame(a, t);
  rx.encode_frame(pattern(80, 2), {.flags = Smsc95xxRx::kRxStsEs | Smsc95xxRx::kRxStsCrc}, t);
  rx.encode_frame(pattern(70, 4), {.flags = Smsc95xxRx::kRxStsEs | Smsc95xxRx::kRxStsTl}, t);
  // LE with FT (an Ethernet II frame, length field is a type) is not a length error ...
  rx.encode_frame(pattern(30, 5),
                  {.flags = Smsc95xxRx::kRxStsEs | Smsc95xxRx::kRxStsLe | Smsc95xxRx::kRxStsFt}, t);
  // ... LE without FT is; CRC masks the other sub-counters.
  rx.encode_frame(pattern(30, 6), {.flags = Smsc95xxRx::kRxStsEs | Smsc95xxRx::kRxStsLe}, t);
  rx.encode_frame(pattern(30, 7),
                  {.flags = Smsc95xxRx::kRxStsEs | Smsc95xxRx::kRxStsCrc | Smsc95xxRx::kRxStsLe},
                  t);
  rx.encode_frame(c, t);
  Collected got;
  const auto r = decode_all(rx, t, got);
  ASSERT_EQ(got.frames.size(), 2u);
  EXPECT_EQ(got.frames[0], a);
  EXPECT_EQ(got.frames[1], c);
  EXPECT_EQ(r.error_frames, 5u);
  EXPECT_EQ(r.crc_errors, 2u);
  EXPECT_EQ(r.frame_errors, 1u);
  EXPECT_EQ(r.length_errors, 1u);
  EXPECT_EQ(r.rx_errors, 5u);
  EXPECT_EQ(r.abort, FramingAbort::kNone);

  // FreeBSD: one input error per ES frame, no sub-counters.
  Smsc95xxRx bsd({.driver = UsbNetDriver::kFreeBsd});
  Collected got_bsd;
  const auto rb = decode_all(bsd, t, got_bsd);
  EXPECT_EQ(got_bsd.frames, got.frames);
  EXPECT_EQ(rb.error_frames, 5u);
  EXPECT_EQ(rb.rx_errors, 5u);
  EXPECT_EQ(rb.crc_errors, 0u);
}

TEST(Smsc95xxRx, LinuxCountsAnEmptyTailAfterAnEsFrameOrPadding) {
  // §4.4 + usbnet rx_process: when the loop consumes the whole URB without returning the last
  // frame through the URB skb itself, usbnet sees len 0 < ETH_HLEN: rx_errors++,
  // rx_length_errors++.
  Smsc95xxRx rx;
  Bytes t;
  rx.encode_frame(pattern(100), t);
  rx.encode_frame(pattern(80), {.flags = Smsc95xxRx::kRxStsEs | Smsc95xxRx::kRxStsCrc}, t);
  auto r = rx.decode(t, [](std::span<const uint8_t>) {});
  EXPECT_EQ(r.frames, 1u);
  EXPECT_EQ(r.error_frames, 1u);
  EXPECT_EQ(r.rx_errors, 2u);
  EXPECT_EQ(r.length_errors, 1u);
  EXPECT_EQ(r.abort, FramingAbort::kNone);

  // A last frame followed by its full alignment padding (61 + 6 -> 3 pad bytes): delivered
  // via a clone, then the empty URB is a length error.
  Bytes p;
  rx.encode_frame(pattern(61), p);
  p.insert(p.end(), {0, 0, 0});
  r = rx.decode(p, [](std::span<const uint8_t>) {});
  EXPECT_EQ(r.frames, 1u);
  EXPECT_EQ(r.rx_errors, 1u);
  EXPECT_EQ(r.length_errors, 1u);
  // Only 2 of the 3 pad bytes: skb_pull(3) fails, 2 bytes cannot hold a status word.
  p.pop_back();
  r = rx.decode(p, [](std::span<const uint8_t>) {});
  EXPECT_EQ(r.frames, 1u);
  EXPECT_EQ(r.abort, FramingAbort::kTruncated);
  EXPECT_EQ(r.dropped_bytes, 2u);
  EXPECT_EQ(r.rx_errors, 1u);

  // FreeBSD re-aligns and stops quietly.
  Smsc95xxRx bsd({.driver = UsbNetDriver::kFreeBsd});
  r = bsd.decode(t, [](std::span<const uint8_t>) {});
  EXPECT_EQ(r.frames, 1u);
  EXPECT_EQ(r.rx_errors, 1u);
  EXPECT_EQ(r.length_errors, 0u);
}

TEST(Smsc95xxRx, LinuxShortLastFrameIsALengthErrorButEarlierOnesAreDelivered) {
  // §4.4 Linux loop (last frame reuses the URB skb) + §6.2 usbnet rx_process.
  // usbnet rx_process: the URB skb (the last frame) must hold >= ETH_HLEN bytes; frames
  // cloned before it go up regardless.
  Smsc95xxRx rx;
  Bytes t;
  rx.encode_frame(pattern(10), t);
  rx.encode_frame(pattern(60), t);
  rx.encode_frame(pattern(13), t);
  std::vector<size_t> sizes;
  const auto r = rx.decode(t, [&sizes](std::span<const uint8_t> f) { sizes.push_back(f.size()); });
  EXPECT_EQ(sizes, (std::vector<size_t>{10, 60}));
  EXPECT_EQ(r.rx_errors, 1u);
  EXPECT_EQ(r.length_errors, 1u);

  // FreeBSD stops silently at the first frame shorter than 14 + 4 (after the COE word).
  Smsc95xxRx bsd({.driver = UsbNetDriver::kFreeBsd});
  sizes.clear();
  const auto rb =
      bsd.decode(t, [&sizes](std::span<const uint8_t> f) { sizes.push_back(f.size()); });
  EXPECT_TRUE(sizes.empty());
  EXPECT_EQ(rb.abort, FramingAbort::kBadLength);
  EXPECT_EQ(rb.dropped_bytes, t.size());
  EXPECT_EQ(rb.rx_errors, 0u);
}

TEST(Smsc95xxRx, OversizeAbortsTheRestOfTheTransfer) {
  // §4.4 Linux: size > ETH_FRAME_LEN + 12 (1526) -> return 0: the rest of the URB is dropped
  // and usbnet counts one rx_error. FL 1526 itself is accepted.
  Smsc95xxRx rx;  // COE on: FL = frame + 6
  const Bytes a = pattern(100, 1);
  Bytes t;
  rx.encode_frame(a, t);
  rx.encode_frame(pattern(1520, 2), t);  // FL 1526: ok
  const size_t oversize_at = t.size();   // 112 + 1532: 4-byte aligned, no padding
  rx.encode_frame(pattern(1521, 3), t);  // FL 1527: too long
  rx.encode_frame(pattern(64, 4), t);
  std::vector<size_t> sizes;
  auto r = rx.decode(t, [&sizes](std::span<const uint8_t> f) { sizes.push_back(f.size()); });
  EXPECT_EQ(sizes, (std::vector<size_t>{100, 1520}));
  EXPECT_EQ(r.abort, FramingAbort::kOversize);
  EXPECT_EQ(r.dropped_bytes, t.size() - oversize_at);
  EXPECT_EQ(r.rx_errors, 1u);
  EXPECT_EQ(rx.stats().aborted_transfers, 1u);

  // FreeBSD only bounds the frame by its mbuf cluster (2046).
  Smsc95xxRx bsd({.driver = UsbNetDriver::kFreeBsd});
  sizes.clear();
  r = bsd.decode(t, [&sizes](std::span<const uint8_t> f) { sizes.push_back(f.size()); });
  EXPECT_EQ(sizes, (std::vector<size_t>{100, 1520, 1521, 64}));
  Bytes big;
  bsd.encode_frame(pattern(2041), big);  // FL 2047
  r = bsd.decode(big, [](std::span<const uint8_t>) {});
  EXPECT_EQ(r.abort, FramingAbort::kOversize);
  EXPECT_EQ(r.rx_errors, 0u);
}

TEST(Smsc95xxRx, LengthBeyondTheDataAbortsWithoutReadingPastIt) {
  // §4.4, Linux 2023 fix: FL larger than the remaining URB data -> return 0. The decoder reads
  // only inside the span (exact-size heap buffers: the sanitizer build checks this).
  Smsc95xxRx rx;
  Bytes t;
  rx.encode_frame(pattern(100), t);
  const size_t second = t.size();  // 6 + 100 + 6 = 112, already aligned
  rx.encode_frame(pattern(300), t);
  for (size_t cut : {second + 1, second + 3, second + 6, second + 50, t.size() - 1}) {
    const Bytes part(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(cut));
    std::vector<size_t> sizes;
    const auto r =
        rx.decode(part, [&sizes](std::span<const uint8_t> f) { sizes.push_back(f.size()); });
    EXPECT_EQ(sizes, (std::vector<size_t>{100})) << cut;
    EXPECT_EQ(r.abort, FramingAbort::kTruncated) << cut;
    EXPECT_EQ(r.dropped_bytes, cut - second) << cut;
    EXPECT_EQ(r.rx_errors, 1u);
  }
  // A status word whose FL exceeds the data, even on an ES frame, aborts.
  Bytes es;
  rx.encode_frame(pattern(40), {.flags = Smsc95xxRx::kRxStsEs}, es);
  put_le32(es, 0, le32_at(es, 0) + (1u << 16));
  const auto r = rx.decode(es, [](std::span<const uint8_t>) { FAIL(); });
  EXPECT_EQ(r.abort, FramingAbort::kTruncated);
  EXPECT_EQ(r.error_frames, 0u);

  // FreeBSD: the same cut stops parsing, silently.
  Smsc95xxRx bsd({.driver = UsbNetDriver::kFreeBsd});
  const Bytes part(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(second + 50));
  const auto rb = bsd.decode(part, [](std::span<const uint8_t>) {});
  EXPECT_EQ(rb.frames, 1u);
  EXPECT_EQ(rb.abort, FramingAbort::kTruncated);
  EXPECT_EQ(rb.rx_errors, 0u);
}

TEST(Smsc95xxRx, ShortTransfers) {
  // §4.4 (Linux rx_fixup entry check; FreeBSD short-transfer skip).
  // Linux smsc95xx_rx_fixup: len < hard_header_len (14) -> return 0 (one rx_error).
  // FreeBSD: actlen < 4 + ETHER_CRC_LEN is ignored ("always a zero length frame after
  // bringing the IF up").
  Smsc95xxRx rx;
  Smsc95xxRx bsd({.driver = UsbNetDriver::kFreeBsd});
  for (size_t len : {0u, 1u, 7u, 13u}) {
    const Bytes t(len, 0);
    const auto r = rx.decode(t, [](std::span<const uint8_t>) {});
    EXPECT_EQ(r.abort, FramingAbort::kShortTransfer);
    EXPECT_EQ(r.rx_errors, 1u);
    EXPECT_EQ(r.dropped_bytes, len);
    const auto rb = bsd.decode(t, [](std::span<const uint8_t>) {});
    EXPECT_EQ(rb.abort, len < 8 ? FramingAbort::kShortTransfer : FramingAbort::kBadLength);
    EXPECT_EQ(rb.rx_errors, 0u);
  }
}

TEST(Smsc95xxRx, TransferSizesOfFullSizeFrames) {
  // §4.4 + §6.1: N full-size (1514-byte) frames. With COE: each frame is 4 + 2 + 1514 + 4 + 2 =
  // 1526 bytes, padded to 1528 before the next status word; without COE 1524 (aligned).
  // Turbo mode's 18,944-byte BURST_CAP (§4.2) holds 12 of them.
  for (bool coe : {true, false}) {
    Smsc95xxRx rx({.rx_coe = coe, .compute_fcs = false});
    Bytes t;
    size_t by_append = 0;
    for (size_t n = 1; n <= 12; ++n) {
      by_append += rx.append_size(by_append, 1514);
      rx.encode_frame(Bytes(1514), t);
      const size_t expected = coe ? 1528 * (n - 1) + 1526 : 1524 * n;
      EXPECT_EQ(t.size(), expected) << n;
      EXPECT_EQ(by_append, expected) << n;
    }
    EXPECT_EQ(t.size(), coe ? 18334u : 18288u);
    EXPECT_LE(t.size(), 18944u);
    EXPECT_EQ((t.size() + 511) / 512, 36u);  // high-speed bulk packets
  }
}

TEST(Smsc95xxRx, RejectsBadParams) {
  // §4.3/§4.4: the driver selector must be linux or freebsd.
  Smsc95xxRx::Params p;
  p.driver = static_cast<UsbNetDriver>(7);
  const auto err = p.validate();
  ASSERT_TRUE(err);
  EXPECT_EQ(err->key, "driver");
  EXPECT_THROW(Smsc95xxRx{p}, InvalidParams);
  EXPECT_FALSE(Smsc95xxRx::Params{}.validate());
  EXPECT_TRUE(Smsc95xxRx::Params{}.rx_coe);  // Linux default NETIF_F_RXCSUM
}

// --- TX --------------------------------------------------------------------------------------

struct TxCollected {
  std::vector<Bytes> frames;
  std::vector<Smsc95xxTx::Frame> meta;
};

Smsc95xxTx::Result decode_all(Smsc95xxTx& tx, const Bytes& t, TxCollected& out) {
  return tx.decode(t, [&out](const Smsc95xxTx::Frame& f) {
    out.frames.emplace_back(f.data.begin(), f.data.end());
    out.meta.push_back(f);
  });
}

TEST(Smsc95xxTx, HandBuiltLayout) {
  // §4.5: A = FIRST_SEG | LAST_SEG | len, B = len.
  Smsc95xxTx tx;
  const Bytes f = pattern(60, 9);
  Bytes t;
  ASSERT_TRUE(tx.encode_frame(f, t));
  ASSERT_EQ(t.size(), 68u);
  EXPECT_EQ((Bytes{t.begin(), t.begin() + 8}), (Bytes{0x3C, 0x30, 0, 0, 0x3C, 0, 0, 0}));
  EXPECT_TRUE(std::equal(f.begin(), f.end(), t.begin() + 8));

  // With the checksum preamble: lengths + 4, B.CSUM_ENABLE, preamble = insert << 16 | start.
  const Bytes g = pattern(100, 5);
  Bytes u;
  ASSERT_TRUE(tx.encode_frame(g, {.partial = true, .csum_start = 34, .csum_offset = 16}, u));
  ASSERT_EQ(u.size(), 112u);
  EXPECT_EQ((Bytes{u.begin(), u.begin() + 12}),
            (Bytes{0x68, 0x30, 0, 0, 0x68, 0x40, 0, 0, 0x22, 0x00, 0x32, 0x00}));
  EXPECT_TRUE(std::equal(g.begin(), g.end(), u.begin() + 12));

  TxCollected got;
  const auto r = decode_all(tx, u, got);
  ASSERT_EQ(got.frames.size(), 1u);
  EXPECT_EQ(got.frames[0], g);
  EXPECT_TRUE(got.meta[0].csum);
  EXPECT_EQ(got.meta[0].csum_start, 34);
  EXPECT_EQ(got.meta[0].csum_insert, 50);
  EXPECT_EQ(r.csum_frames, 1u);
}

TEST(Smsc95xxTx, SoftwareChecksumForShortFramesAndFieldsNearTheEnd) {
  // §4.5: frames <= 45 bytes get a software checksum (hardware bug workaround); so does a
  // checksum field within the last 5 bytes (smsc95xx_can_tx_checksum).
  Smsc95xxTx tx;
  Bytes f(42, 0);
  const Bytes udp = {0x00, 0x35, 0x00, 0x35, 0x00, 0x08, 0x12, 0x34};  // 0x1234: seed
  std::copy(udp.begin(), udp.end(), f.begin() + 34);
  const Smsc95xxTx::Offload off{.partial = true, .csum_start = 34, .csum_offset = 6};
  EXPECT_FALSE(tx.uses_preamble(f.size(), off));
  Bytes t;
  ASSERT_TRUE(tx.encode_frame(f, off, t));
  ASSERT_EQ(t.size(), 50u);
  EXPECT_EQ(le32_at(t, 4), 42u);  // no CSUM_ENABLE
  EXPECT_EQ(t[8 + 40], 0xED);     // ~(0x0035 + 0x0035 + 0x0008 + 0x1234)
  EXPECT_EQ(t[8 + 41], 0x59);
  EXPECT_EQ(f[40], 0x12);  // the caller's frame is untouched

  EXPECT_TRUE(tx.uses_preamble(46, {.partial = true, .csum_start = 34, .csum_offset = 6}));
  EXPECT_FALSE(tx.uses_preamble(100, {.partial = true, .csum_start = 90, .csum_offset = 5}));
  EXPECT_TRUE(tx.uses_preamble(100, {.partial = true, .csum_start = 90, .csum_offset = 4}));
  EXPECT_FALSE(Smsc95xxTx({.tx_coe = false}).uses_preamble(100, {.partial = true}));
}

TEST(Smsc95xxTx, DeviceChecksumEqualsDriverSoftwareChecksum) {
  // §4.5: checksum preamble (start, insert) vs the software fallback.
  // The device's insert (CSUM_ENABLE) and the driver's software path compute the same bytes.
  std::mt19937_64 rng(7);
  const Bytes f = random_frame(rng, 200);
  const Smsc95xxTx::Offload off{.partial = true, .csum_start = 34, .csum_offset = 16};
  Smsc95xxTx hw;
  Smsc95xxTx sw({.tx_coe = false});
  Bytes th;
  Bytes ts;
  ASSERT_TRUE(hw.encode_frame(f, off, th));
  ASSERT_TRUE(sw.encode_frame(f, off, ts));
  EXPECT_EQ(th.size(), 212u);
  EXPECT_EQ(ts.size(), 208u);
  TxCollected got;
  decode_all(hw, th, got);
  ASSERT_EQ(got.frames.size(), 1u);
  Bytes device = got.frames[0];
  ASSERT_TRUE(Smsc95xxTx::insert_checksum(device, got.meta[0].csum_start, got.meta[0].csum_insert));
  EXPECT_EQ(device, Bytes(ts.begin() + 8, ts.end()));
  EXPECT_NE(device, f);
}

TEST(Smsc95xxTx, RoundTripPackedFrames) {
  // §4.5: frames packed into one transfer (each command pair 4-byte aligned) decode intact.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    Smsc95xxTx tx;
    const size_t n = 1 + rng() % 12;
    std::vector<Bytes> frames;
    Bytes t;
    size_t expected_size = 0;
    for (size_t i = 0; i < n; ++i) {
      frames.push_back(random_frame(rng, 14 + rng() % 1501));
      // Hardware checksum requests only (the software path rewrites the frame's bytes).
      const Smsc95xxTx::Offload off{.partial = (rng() % 2) == 0 && frames.back().size() >= 46,
                                    .csum_start = 14};
      expected_size += tx.append_size(expected_size, frames.back().size(), off);
      ASSERT_TRUE(tx.encode_frame(frames.back(), off, t));
    }
    EXPECT_EQ(t.size(), expected_size);
    TxCollected got;
    const auto r = decode_all(tx, t, got);
    EXPECT_EQ(got.frames, frames) << seed;
    EXPECT_EQ(r.abort, FramingAbort::kNone);
  }
}

TEST(Smsc95xxTx, TransferSizes) {
  // §4.5: 8 bytes of command words per frame, 12 with the checksum preamble.
  Smsc95xxTx tx;
  Bytes t;
  tx.encode_frame(Bytes(1514), t);
  EXPECT_EQ(t.size(), 1522u);
  tx.encode_frame(Bytes(1514), t);
  EXPECT_EQ(t.size(), 1522u + 2 + 1522);
  Bytes u;
  tx.encode_frame(Bytes(1514), {.partial = true, .csum_start = 34, .csum_offset = 16}, u);
  EXPECT_EQ(u.size(), 1526u);
  EXPECT_EQ(tx.append_size(0, 1514), 1522u);
}

TEST(Smsc95xxTx, MalformedCommandWordsDropTheRest) {
  // §4.5 command words; device-side handling of bad ones is inferred (see docs).
  Smsc95xxTx tx;
  Bytes good;
  tx.encode_frame(pattern(60), good);
  const size_t second = good.size();
  tx.encode_frame(pattern(80), good);
  tx.encode_frame(pattern(90), good);

  auto expect_one_then = [&](const Bytes& t, FramingAbort why) {
    TxCollected got;
    const auto r = decode_all(tx, t, got);
    EXPECT_EQ(got.frames.size(), 1u);
    EXPECT_EQ(r.abort, why);
    EXPECT_EQ(r.dropped_bytes, t.size() - second);
  };
  Bytes t = good;
  put_le32(t, second, le32_at(t, second) & ~Smsc95xxTx::kTxCmdAFirstSeg);  // multi-segment
  expect_one_then(t, FramingAbort::kBadHeader);
  t = good;
  put_le32(t, second + 4, 81);  // B length != A buffer size
  expect_one_then(t, FramingAbort::kBadHeader);
  t = good;
  put_le32(t, second, le32_at(t, second) + 500);  // buffer beyond the data
  put_le32(t, second + 4, le32_at(t, second + 4) + 500);
  expect_one_then(t, FramingAbort::kTruncated);
  t.assign(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(second + 5));
  expect_one_then(t, FramingAbort::kTruncated);
  EXPECT_EQ(tx.stats().aborted_transfers, 4u);
}

TEST(Smsc95xxTx, EncodeRejectsWhatDoesNotFit) {
  // §4.5: buffer size and frame length are 11-bit fields.
  Smsc95xxTx tx;
  Bytes t;
  EXPECT_TRUE(tx.encode_frame(Bytes(2047), t));
  EXPECT_FALSE(tx.encode_frame(Bytes(2048), t));
  EXPECT_FALSE(tx.encode_frame(Bytes(2044), {.partial = true, .csum_start = 34}, t));
  EXPECT_FALSE(
      tx.encode_frame(Bytes(60), {.partial = true, .csum_start = 50, .csum_offset = 9}, t));
  EXPECT_FALSE(tx.encode_frame(Bytes(), t));
  EXPECT_EQ(t.size(), 2055u);
}

// --- Fuzz seed corpus ------------------------------------------------------------------------
// nicsim/algo/fuzz_corpus/smsc95xx_framing/ holds seeds for smsc95xx_framing_fuzz. Byte 0 is the
// fuzzer's configuration (bit 0 FreeBSD, bit 1 rx_coe, bit 2 tx_coe); the rest is a transfer or
// frame material. This test pins the committed seeds to the encoders; run it with
// NICSIM_WRITE_FUZZ_CORPUS=1 to rewrite them.

std::vector<std::pair<std::string, Bytes>> corpus_seeds() {
  std::vector<std::pair<std::string, Bytes>> seeds;
  {
    Smsc95xxRx rx;  // Linux, COE
    Bytes t = {0x02};
    rx.encode_frame(pattern(60, 1), {.flags = Smsc95xxRx::kRxStsBf, .csum = 0x1234}, t);
    rx.encode_frame(pattern(61, 2), {.flags = Smsc95xxRx::kRxStsEs | Smsc95xxRx::kRxStsCrc}, t);
    rx.encode_frame(pattern(99, 3), t);
    seeds.emplace_back("rx_linux_coe", t);
  }
  {
    Smsc95xxRx rx({.driver = UsbNetDriver::kFreeBsd, .rx_coe = false});
    Bytes t = {0x01};
    rx.encode_frame(pattern(64, 4), t);
    rx.encode_frame(pattern(1514, 5), t);
    seeds.emplace_back("rx_freebsd_full", t);
  }
  {
    Smsc95xxTx tx;
    Bytes t = {0x04};
    tx.encode_frame(pattern(60, 6), t);
    tx.encode_frame(pattern(120, 7), {.partial = true, .csum_start = 34, .csum_offset = 16}, t);
    seeds.emplace_back("tx_csum", t);
  }
  {
    // Frame material for the round-trip property: [len lo, len hi, bytes...] repeated.
    Bytes t = {0x06, 46, 0};
    const Bytes a = pattern(60, 8);
    t.insert(t.end(), a.begin(), a.end());
    t.insert(t.end(), {0xDC, 0x05});
    const Bytes b = pattern(200, 9);
    t.insert(t.end(), b.begin(), b.end());
    seeds.emplace_back("frames", t);
  }
  return seeds;
}

TEST(Smsc95xxFramingFuzzCorpus, SeedsMatchTheEncoders) {
  // §4.4/§4.5 transfers as produced by the encoders.
  const auto dir = std::filesystem::path(NICSIM_ALGO_FUZZ_CORPUS_DIR) / "smsc95xx_framing";
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
