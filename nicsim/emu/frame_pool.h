#pragma once
// FramePool — the emulator's frame buffers. A frame read from a host is received straight
// into a pooled buffer, travels through every model stage inside Packet::payload (moved, never
// copied), and the buffer returns here when the Packet is destroyed after the write to the
// other host (PayloadDeleter::release). After warm-up nothing on the packet path allocates.
//
// PayloadDeleter carries only a function pointer, so each buffer records its pool: buffers
// are `Buffer`s (a PayloadBuffer plus the owning pool) and release() casts back. A pool must
// outlive every Payload it handed out (the Session destroys models and ports first).
// Single-threaded, like the rest of the emulator.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nicsim/core/packet.h"
#include "nicsim/emu/vnet_header.h"

namespace nicsim::emu {

// What a port learned about a frame besides its bytes, kept with the buffer (so it travels
// with Packet::payload through every model stage). Only the TAP port with virtio-net headers
// (`--io tap-gso`) fills it: a super-frame's real length (Packet::len then counts its wire
// bytes, vnet_header.h) and the header the host's kernel gave, to hand the receiving kernel.
struct FrameMeta {
  bool vnet = false;
  uint32_t frame_len = 0;  // bytes of the (super-)frame in PayloadBuffer::bytes
  VnetHeader header;
};

class FramePool {
 public:
  // 1514-byte Ethernet frames (plus a VLAN tag and slack) fit in 2 KiB.
  static constexpr size_t kDefaultBufferBytes = 2048;

  explicit FramePool(size_t buffer_bytes = kDefaultBufferBytes, size_t preallocate = 512);
  FramePool(const FramePool&) = delete;
  FramePool& operator=(const FramePool&) = delete;
  ~FramePool();

  // A buffer whose bytes.size() == buffer_bytes() (receive into it, then resize to the frame).
  Payload get();

  // The metadata of a buffer this pool (any FramePool) handed out; reset by get().
  static FrameMeta& meta(PayloadBuffer& b) { return static_cast<Buffer&>(b).meta; }

  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t allocated() const { return allocated_; }  // buffers ever created
  size_t outstanding() const { return allocated_ - free_.size(); }

 private:
  struct Buffer : PayloadBuffer {
    FramePool* pool = nullptr;
    FrameMeta meta;
  };
  static void release(PayloadBuffer* p);
  Buffer* make();

  size_t buffer_bytes_;
  size_t allocated_ = 0;
  std::vector<Buffer*> free_;
};

}  // namespace nicsim::emu
