#include "nicsim/emu/pcap_writer.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace nicsim::emu {
namespace {

// Host byte order, as libpcap writes (readers detect the order from the magic number).
template <class T>
void put(std::FILE* f, T v, int& error) {
  if (std::fwrite(&v, sizeof v, 1, f) != 1 && error == 0) {
    error = errno != 0 ? errno : EIO;
  }
}

}  // namespace

PcapWriter::PcapWriter(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) {
    throw std::runtime_error(path + ": " + std::strerror(errno));
  }
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  put<uint32_t>(file_, kMagicNanoseconds, error_);
  put<uint16_t>(file_, 2, error_);  // version 2.4
  put<uint16_t>(file_, 4, error_);
  put<int32_t>(file_, 0, error_);   // thiszone (always 0)
  put<uint32_t>(file_, 0, error_);  // sigfigs (always 0)
  put<uint32_t>(file_, kSnapLen, error_);
  put<uint32_t>(file_, kLinkTypeEthernet, error_);
}

PcapWriter::~PcapWriter() { close(); }

void PcapWriter::on_wire(size_t /*direction*/, Time first_bit, const Packet& frame) {
  if (!frame.payload) {
    return;
  }
  const size_t n = std::min<size_t>(frame.len, frame.payload->bytes.size());
  write(first_bit.ns_since_epoch() + realtime_offset_ns_,
        std::span<const uint8_t>(frame.payload->bytes.data(), n), frame.len);
}

void PcapWriter::write(int64_t realtime_ns, std::span<const uint8_t> bytes, uint32_t orig_len) {
  if (file_ == nullptr) {
    return;
  }
  const size_t caplen = std::min<size_t>(bytes.size(), kSnapLen);
  const int64_t ns = realtime_ns < 0 ? 0 : realtime_ns;
  put<uint32_t>(file_, static_cast<uint32_t>(ns / 1'000'000'000), error_);
  put<uint32_t>(file_, static_cast<uint32_t>(ns % 1'000'000'000), error_);
  put<uint32_t>(file_, static_cast<uint32_t>(caplen), error_);
  put<uint32_t>(file_, orig_len, error_);
  if (caplen > 0 && std::fwrite(bytes.data(), 1, caplen, file_) != caplen && error_ == 0) {
    error_ = errno != 0 ? errno : EIO;
  }
  ++frames_;
}

std::string PcapWriter::close() {
  if (file_ != nullptr) {
    if (std::fclose(file_) != 0 && error_ == 0) {
      error_ = errno != 0 ? errno : EIO;
    }
    file_ = nullptr;
  }
  return error_ != 0 ? path_ + ": " + std::strerror(error_) : std::string();
}

}  // namespace nicsim::emu
