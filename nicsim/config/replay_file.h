#pragma once
// Replay recordings — the frames an emulation handed to its NIC models (`nicsim emulate
// --record FILE`), as a pcapng file that `[[traffic.replay]]` feeds back into `nicsim run`
// (docs/emu.md "Replay", docs/scenarios.md).
//
// Format: pcapng (draft-ietf-opsawg-pcapng, https://www.ietf.org/archive/id/
// draft-ietf-opsawg-pcapng-02.html; tshark/Wireshark read it), one section:
//   * Section Header Block: byte-order magic, version 1.0, shb_userappl "nicsim", a comment
//     saying what the file is and the wall-clock time of time 0.
//   * One Interface Description Block per host, in the scenario's host order: LINKTYPE_ETHERNET,
//     snaplen kReplaySnapLen, if_name = the host's name, if_tsresol = 9 (nanoseconds).
//   * One Enhanced Packet Block per frame, in input-time order: interface = the sending host,
//     timestamp = the time the frame entered its NIC model, in ns since the emulation's time 0
//     (so tshark's frame.time_epoch is seconds since the run started), the frame's first
//     kReplaySnapLen bytes (its headers: who, where, which flow) and its original length, and
//     an opt_comment with what the emulator derived from the bytes and the models read:
//       "nicsim to=1 prio=0 tos=0x00 hash=0x1a2b3c4d segs=1 gso=0"
//     to = the destination host's index (the interface order; "-" for none), prio =
//     skb->priority, tos = the IPv4 TOS byte (DSCP + ECN), hash = the flow hash, segs / gso =
//     Packet::gso_segs / gso_size (a TSO super-frame; 1 / 0 otherwise).
//   The comment keeps the replay exactly what the models saw without re-parsing headers
//   (classification belongs to the emulator), and stays readable (`tshark -e frame.comment`).
//
// The reader is a parser of untrusted bytes: bounded (kMaxReplayFrames, kMaxReplayBytes), both
// byte orders, unknown block types and options skipped, every length checked before use;
// errors are ReplayFileError with the byte offset of the block at fault (replay_file_fuzz).
// Writing is in memory (encode_*): the emulator buffers and writes; config reads the file.

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace nicsim::config {

inline constexpr uint32_t kReplaySnapLen = 128;             // Ethernet + IPv4 with options + ports
inline constexpr size_t kMaxReplayFrames = 50'000'000;      // as udp_flood's datagrams per run
inline constexpr size_t kMaxReplayBytes = size_t{1} << 30;  // 1 GiB file
inline constexpr uint16_t kReplayNoHost = 0xffff;           // "to=-"

struct ReplayFrame {
  int64_t time_ns = 0;          // input time, ns since the emulation's time 0
  uint16_t host = 0;            // sending host: index into ReplayRecording::hosts
  uint16_t to = kReplayNoHost;  // destination host index, kReplayNoHost: none
  uint32_t len = 0;             // Packet::len (skb->len, the frame without FCS)
  uint8_t priority = 0;         // skb->priority
  uint8_t tos = 0;              // DSCP + ECN
  uint32_t flow_hash = 0;
  uint16_t gso_segs = 1;
  uint16_t gso_size = 0;
  bool operator==(const ReplayFrame&) const = default;
};

struct ReplayRecording {
  std::vector<std::string> hosts;   // the interfaces' if_name, in interface order
  std::vector<ReplayFrame> frames;  // in time order
  bool operator==(const ReplayRecording&) const = default;
};

class ReplayFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a recording. Throws ReplayFileError ("byte N: what is wrong") for anything that is
// not a recording nicsim can replay: not pcapng, truncated or inconsistent blocks, a frame
// without the nicsim comment or with a bad field, times going backwards, too many frames.
ReplayRecording parse_replay(std::span<const uint8_t> bytes);

// The file's first blocks: section header (with `comment`) and one interface per host.
std::string encode_replay_header(const std::vector<std::string>& hosts, const std::string& comment);
// Appends one frame: `f`'s fields and the first kReplaySnapLen of `bytes` (which may be empty:
// a frame without bytes records its length only).
void encode_replay_frame(std::string& out, const ReplayFrame& f, std::span<const uint8_t> bytes);

}  // namespace nicsim::config
