#include "nicsim/emu/frame_recorder.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
#include <stdexcept>

#include "nicsim/config/replay_file.h"

namespace nicsim::emu {

static_assert(Datapath::kUnknownHost == config::kReplayNoHost);

FrameRecorder::FrameRecorder(const std::string& path, const std::vector<std::string>& hosts,
                             int64_t realtime_at_zero_ns)
    : path_(path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) {
    throw std::runtime_error(path + ": " + std::strerror(errno));
  }
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  write(config::encode_replay_header(
      hosts,
      "nicsim emulate --record: the frames each host handed to its emulated NIC, at "
      "their input times in ns since time 0 = CLOCK_REALTIME " +
          std::to_string(realtime_at_zero_ns) + " ns"));
}

FrameRecorder::~FrameRecorder() { close(); }

void FrameRecorder::on_input(size_t host, Time t, const Packet& frame) {
  config::ReplayFrame f;
  f.time_ns = t.ns_since_epoch();
  f.host = static_cast<uint16_t>(host);
  f.to = frame.dst_host;  // Datapath::kUnknownHost is config::kReplayNoHost
  f.len = frame.len;
  f.priority = frame.priority;
  f.tos = frame.tos;
  f.flow_hash = frame.flow_hash;
  f.gso_segs = frame.gso_segs;
  f.gso_size = frame.gso_size;
  std::span<const uint8_t> bytes;
  if (frame.payload) {
    bytes = std::span<const uint8_t>(frame.payload->bytes.data(),
                                     std::min<size_t>(frame.len, frame.payload->bytes.size()));
  }
  block_.clear();
  config::encode_replay_frame(block_, f, bytes);
  write(block_);
  ++frames_;
}

void FrameRecorder::write(const std::string& bytes) {
  if (file_ != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size() &&
      error_ == 0) {
    error_ = errno != 0 ? errno : EIO;
  }
}

std::string FrameRecorder::close() {
  if (file_ != nullptr) {
    if (std::fclose(file_) != 0 && error_ == 0) {
      error_ = errno != 0 ? errno : EIO;
    }
    file_ = nullptr;
  }
  return error_ != 0 ? path_ + ": " + std::strerror(error_) : std::string();
}

}  // namespace nicsim::emu
