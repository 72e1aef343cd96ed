#pragma once
// FramePort — where the emulator meets one host's kernel: frames the host transmits are read
// here, frames for the host are written here. Two implementations (docs/emu.md compares them):
//
//   PacketPort (packet_port.h)  veth pair + AF_PACKET socket, recvmmsg/sendmmsg in batches
//   TapPort    (tap_port.h)     TAP device, one read()/write() per frame
//
// Frames are whole Ethernet frames (destination MAC .. payload, no FCS), at most one MTU:
// the topology turns offloads off, so no GSO/GRO super-packets reach the emulator — except
// through TapPort's super-frame mode (`--io tap-gso`, tap_port.h). A frame
// larger than the pool's buffers is counted as truncated and dropped.

#include <cstddef>
#include <cstdint>
#include <string>

#include "nicsim/core/packet.h"
#include "nicsim/emu/frame_pool.h"

namespace nicsim::emu {

struct PortStats {
  uint64_t rx_frames = 0;  // frames read from the host
  uint64_t rx_bytes = 0;
  uint64_t rx_calls = 0;      // read syscalls (recvmmsg / read), including empty ones
  uint64_t rx_truncated = 0;  // frames larger than a pool buffer (dropped)
  uint64_t tx_frames = 0;     // frames written to the host
  uint64_t tx_bytes = 0;
  uint64_t tx_calls = 0;   // write syscalls (sendmmsg / write)
  uint64_t tx_errors = 0;  // frames the kernel refused (counted, dropped)
  // Frames the host sent that its kernel dropped before the emulator read them: the port's
  // receive queue was full because the emulator fell behind (AF_PACKET: the socket buffer,
  // PACKET_STATISTICS tp_drops; TAP: the device's queue, its tx_dropped). No NIC model saw
  // them; known once update_kernel_counters() has run (at the end of a session).
  uint64_t rx_dropped = 0;
  // Super-frames (TapPort with virtio-net headers, `--io tap-gso`): TCP packets of several
  // MTU segments read as one (and how many segments they held), written as one, and the
  // byte-less segments the NIC models cut from them (delivered inside the super-frame).
  uint64_t rx_super_frames = 0;
  uint64_t rx_super_segments = 0;
  uint64_t tx_super_frames = 0;
  uint64_t tx_merged_segments = 0;
  uint64_t tx_partial_super_frames = 0;  // some segments dropped: the rest written as MTU frames
};

class FramePort {
 public:
  virtual ~FramePort() = default;
  // Readable (EPOLLIN) when the host has sent frames.
  virtual int fd() const = 0;
  // Reads up to `max` frames without blocking into out[0..n): payload holds the bytes,
  // len = frame length; rx_realtime_ns[i] is when the kernel received frame i (CLOCK_REALTIME
  // nanoseconds, i.e. when the host sent it), 0 when the port has no timestamps. Returns n
  // (0 when nothing is waiting).
  virtual size_t receive(Packet* out, int64_t* rx_realtime_ns, size_t max) = 0;
  // Queues a frame for the host (written by flush(); a full batch is written at once).
  virtual void send(Packet&& frame) = 0;
  // Writes every queued frame; their buffers return to the pool.
  virtual void flush() = 0;
  virtual const PortStats& stats() const = 0;
  // Reads the counters only the kernel keeps (rx_dropped) into stats(). A few system calls:
  // called when the run has stopped, not per frame.
  virtual void update_kernel_counters() {}
  virtual std::string describe() const = 0;
  // True when receive() pulls frames out of the host on demand (XdpPort): the host kernel
  // keeps what is not pulled, so the caller asks only for what the emulated NIC accepts now.
  // False: frames arrive on their own and must be read at once (PacketPort, TapPort).
  virtual bool pulls() const { return false; }
};

}  // namespace nicsim::emu
