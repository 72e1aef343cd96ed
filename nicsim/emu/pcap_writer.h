#pragma once
// PcapWriter — frames crossing the emulated wire as a classic pcap file with nanosecond
// timestamps (magic 0xa1b23c4d, version 2.4, LINKTYPE_ETHERNET; the format libpcap, tcpdump,
// tshark and Wireshark read: https://www.tcpdump.org/manpages/pcap-savefile.5.html and
// draft-ietf-opsawg-pcap). Each record is one frame as it entered the wire (its skb->len bytes,
// no FCS), stamped with the wall-clock time of its first bit (the model time mapped to
// CLOCK_REALTIME). Buffered writes; errors are reported by close(), never thrown mid-run.

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "nicsim/core/packet.h"
#include "nicsim/core/time.h"
#include "nicsim/emu/datapath.h"

namespace nicsim::emu {

class PcapWriter final : public WireTap {
 public:
  static constexpr uint32_t kMagicNanoseconds = 0xa1b23c4d;
  static constexpr uint32_t kLinkTypeEthernet = 1;
  static constexpr uint32_t kSnapLen = 65535;

  // Creates (truncates) `path` and writes the file header. Throws std::runtime_error naming
  // the file when it cannot be opened.
  explicit PcapWriter(const std::string& path);
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;
  ~PcapWriter() override;

  // Model time → CLOCK_REALTIME nanoseconds: realtime = time + offset (RealClock's
  // realtime_minus_time_ns). Set before the first frame.
  void set_realtime_offset_ns(int64_t offset) { realtime_offset_ns_ = offset; }

  void on_wire(size_t direction, Time first_bit, const Packet& frame) override;
  // Writes one record (frame bytes) at `realtime_ns`.
  void write(int64_t realtime_ns, std::span<const uint8_t> bytes, uint32_t orig_len);

  // Flushes and closes; returns "" or the error ("FILE: reason").
  std::string close();
  uint64_t frames() const { return frames_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  int64_t realtime_offset_ns_ = 0;
  uint64_t frames_ = 0;
  int error_ = 0;  // first errno seen
};

}  // namespace nicsim::emu
