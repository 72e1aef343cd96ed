#include "nicsim/emu/frame_pool.h"

#include <cassert>

namespace nicsim::emu {

FramePool::FramePool(size_t buffer_bytes, size_t preallocate) : buffer_bytes_(buffer_bytes) {
  free_.reserve(preallocate);
  for (size_t i = 0; i < preallocate; ++i) {
    free_.push_back(make());
  }
}

FramePool::~FramePool() {
  assert(outstanding() == 0 && "a Payload outlived its FramePool");
  for (Buffer* b : free_) {
    delete b;
  }
}

FramePool::Buffer* FramePool::make() {
  auto* b = new Buffer;
  b->bytes.resize(buffer_bytes_);
  b->pool = this;
  ++allocated_;
  return b;
}

Payload FramePool::get() {
  Buffer* b;
  if (free_.empty()) {
    b = make();
  } else {
    b = free_.back();
    free_.pop_back();
    b->bytes.resize(buffer_bytes_);  // within capacity: no allocation
  }
  b->meta = FrameMeta{};
  return Payload(b, PayloadDeleter{&FramePool::release});
}

void FramePool::release(PayloadBuffer* p) {
  auto* b = static_cast<Buffer*>(p);
  b->pool->free_.push_back(b);
}

}  // namespace nicsim::emu
