#include "nicsim/config/replay_file.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <string_view>

namespace nicsim::config {
namespace {

// pcapng block types and option codes (draft-ietf-opsawg-pcapng sections 4.1-4.3, 3.5).
constexpr uint32_t kShb = 0x0A0D0D0A;
constexpr uint32_t kIdb = 0x00000001;
constexpr uint32_t kEpb = 0x00000006;
constexpr uint32_t kByteOrderMagic = 0x1A2B3C4D;
constexpr uint32_t kByteOrderSwapped = 0x4D3C2B1A;
constexpr uint16_t kOptEnd = 0;
constexpr uint16_t kOptComment = 1;
constexpr uint16_t kShbUserAppl = 4;
constexpr uint16_t kIfName = 2;
constexpr uint16_t kIfTsresol = 9;
constexpr uint16_t kIfTsoffset = 14;
constexpr uint16_t kLinkTypeEthernet = 1;
constexpr size_t kMaxHosts = 4096;

[[noreturn]] void bad(size_t at, const std::string& what) {
  throw ReplayFileError("byte " + std::to_string(at) + ": " + what);
}

// ---- writing (host byte order, as pcapng allows: the magic tells readers) ----------------

void put16(std::string& o, uint16_t v) { o.append(reinterpret_cast<const char*>(&v), 2); }
void put32(std::string& o, uint32_t v) { o.append(reinterpret_cast<const char*>(&v), 4); }
void pad4(std::string& o) { o.append((4 - o.size() % 4) % 4, '\0'); }

void put_option(std::string& body, uint16_t code, std::string_view value) {
  put16(body, code);
  put16(body, static_cast<uint16_t>(value.size()));
  body.append(value);
  pad4(body);
}

void put_block(std::string& out, uint32_t type, std::string& body) {
  pad4(body);
  const auto total = static_cast<uint32_t>(body.size() + 12);
  put32(out, type);
  put32(out, total);
  out += body;
  put32(out, total);
}

std::string hex(uint32_t v, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s = "0x";
  for (int i = digits - 1; i >= 0; --i) {
    s += kDigits[(v >> (4 * i)) & 0xf];
  }
  return s;
}

// ---- reading -------------------------------------------------------------------------------

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> b) : b_(b) {}

  ReplayRecording run() {
    if (b_.size() > kMaxReplayBytes) {
      bad(0, "larger than " + std::to_string(kMaxReplayBytes >> 20) + " MiB");
    }
    if (b_.size() < 28 || raw32(0) != kShb) {
      bad(0, "not a pcapng file (record one with nicsim emulate --record)");
    }
    size_t at = 0;
    while (at < b_.size()) {
      at = block(at);
    }
    return std::move(rec_);
  }

 private:
  struct Interface {
    int64_t units_per_s = 1'000'000;  // if_tsresol default: microseconds
    int64_t offset_s = 0;
  };

  uint32_t raw32(size_t at) const {
    uint32_t v;
    std::memcpy(&v, b_.data() + at, 4);
    return v;
  }
  uint16_t u16(size_t at) const {
    uint16_t v;
    std::memcpy(&v, b_.data() + at, 2);
    return swap_ ? static_cast<uint16_t>((v >> 8) | (v << 8)) : v;
  }
  uint32_t u32(size_t at) const {
    const uint32_t v = raw32(at);
    return swap_ ? __builtin_bswap32(v) : v;
  }

  // One block at `at`; returns the offset of the next.
  size_t block(size_t at) {
    if (b_.size() - at < 12) {
      bad(at, "truncated block header");
    }
    const uint32_t type = raw32(at) == kShb ? kShb : u32(at);
    if (type == kShb) {
      section(at);
    }
    const uint32_t len = u32(at + 4);
    if (len < 12 || len % 4 != 0) {
      bad(at, "block length " + std::to_string(len) + " is not a multiple of 4 of at least 12");
    }
    if (len > b_.size() - at) {
      bad(at, "block length " + std::to_string(len) + " but " + std::to_string(b_.size() - at) +
                  " bytes left (a truncated file?)");
    }
    if (u32(at + len - 4) != len) {
      bad(at, "block length " + std::to_string(len) + " differs from its trailing copy");
    }
    const size_t body = at + 8;
    const size_t end = at + len - 4;
    if (type == kIdb) {
      interface(body, end);
    } else if (type == kEpb) {
      packet(body, end);
    }  // other blocks (name resolution, statistics, ...) carry nothing the replay needs
    return at + len;
  }

  void section(size_t at) {
    if (seen_section_) {
      bad(at, "a second section: one recording per file");
    }
    seen_section_ = true;
    const uint32_t magic = raw32(at + 8);
    if (magic != kByteOrderMagic && magic != kByteOrderSwapped) {
      bad(at + 8, "bad byte-order magic");
    }
    swap_ = magic == kByteOrderSwapped;
    if (u16(at + 12) != 1) {
      bad(at + 12, "pcapng major version " + std::to_string(u16(at + 12)) + ", expected 1");
    }
  }

  // Calls f(code, value offset, value length) for each option in [at, end).
  template <class F>
  void options(size_t at, size_t end, F&& f) const {
    while (at < end) {
      if (end - at < 4) {
        bad(at, "truncated option");
      }
      const uint16_t code = u16(at);
      const uint16_t n = u16(at + 2);
      if (code == kOptEnd) {
        return;
      }
      const size_t padded = (static_cast<size_t>(n) + 3) / 4 * 4;
      if (padded > end - at - 4) {
        bad(at, "option " + std::to_string(code) + " of " + std::to_string(n) +
                    " bytes overruns its block");
      }
      f(code, at + 4, static_cast<size_t>(n));
      at += 4 + padded;
    }
  }

  void interface(size_t at, size_t end) {
    if (end - at < 8) {
      bad(at, "truncated interface description");
    }
    if (rec_.hosts.size() >= kMaxHosts) {
      bad(at, "more than " + std::to_string(kMaxHosts) + " interfaces");
    }
    if (u16(at) != kLinkTypeEthernet) {
      bad(at, "link type " + std::to_string(u16(at)) + ", expected 1 (Ethernet)");
    }
    Interface iface;
    std::string name;
    options(at + 8, end, [&](uint16_t code, size_t v, size_t n) {
      if (code == kIfName) {
        name.assign(reinterpret_cast<const char*>(b_.data() + v), n);
      } else if (code == kIfTsresol && n >= 1) {
        const uint8_t r = b_[v];
        if ((r & 0x80) != 0 || r > 9) {
          bad(v, "if_tsresol " + std::to_string(r) + ": only 10^-0..10^-9 s are supported");
        }
        iface.units_per_s = 1;
        for (uint8_t i = 0; i < r; ++i) {
          iface.units_per_s *= 10;
        }
      } else if (code == kIfTsoffset && n >= 8) {
        int64_t s;
        std::memcpy(&s, b_.data() + v, 8);
        iface.offset_s =
            swap_ ? static_cast<int64_t>(__builtin_bswap64(static_cast<uint64_t>(s))) : s;
        if (iface.offset_s < -1'000'000'000 || iface.offset_s > 1'000'000'000) {
          bad(v, "if_tsoffset out of range");
        }
      }
    });
    if (name.empty()) {
      bad(at, "interface " + std::to_string(rec_.hosts.size()) + " has no if_name (its host)");
    }
    rec_.hosts.push_back(std::move(name));
    ifaces_.push_back(iface);
  }

  int64_t time_ns(size_t at, const Interface& iface, uint64_t ts) const {
    const uint64_t per_s = static_cast<uint64_t>(iface.units_per_s);
    const uint64_t s = ts / per_s;
    const uint64_t frac = ts % per_s;
    if (s > 4'000'000'000ull) {
      bad(at, "timestamp beyond the year 2096");
    }
    return (static_cast<int64_t>(s) + iface.offset_s) * 1'000'000'000 +
           static_cast<int64_t>(frac * (1'000'000'000 / per_s));
  }

  void packet(size_t at, size_t end) {
    if (end - at < 20) {
      bad(at, "truncated enhanced packet block");
    }
    const uint32_t iface = u32(at);
    if (iface >= ifaces_.size()) {
      bad(at, "interface " + std::to_string(iface) + " not described");
    }
    if (rec_.frames.size() >= kMaxReplayFrames) {
      bad(at, "more than " + std::to_string(kMaxReplayFrames) + " frames");
    }
    ReplayFrame f;
    f.host = static_cast<uint16_t>(iface);
    const uint64_t ts = (uint64_t{u32(at + 4)} << 32) | u32(at + 8);
    f.time_ns = time_ns(at + 4, ifaces_[iface], ts);
    const uint32_t captured = u32(at + 12);
    const uint32_t orig = u32(at + 16);
    const size_t data_padded = (static_cast<size_t>(captured) + 3) / 4 * 4;
    if (data_padded > end - at - 20) {
      bad(at + 12, "captured length " + std::to_string(captured) + " overruns its block");
    }
    if (orig == 0 || orig > 65'535 * 64 || captured > orig) {
      bad(at + 16, "original length " + std::to_string(orig) + " (captured " +
                       std::to_string(captured) + ")");
    }
    f.len = orig;
    bool commented = false;
    options(at + 20 + data_padded, end, [&](uint16_t code, size_t v, size_t n) {
      if (code == kOptComment && !commented) {
        const std::string_view text(reinterpret_cast<const char*>(b_.data() + v), n);
        if (text.starts_with("nicsim ")) {
          fields(v, text.substr(7), f);
          commented = true;
        }
      }
    });
    if (!commented) {
      bad(at, "frame " + std::to_string(rec_.frames.size()) +
                  " has no nicsim comment (not recorded by nicsim emulate --record)");
    }
    if (f.to != kReplayNoHost && f.to >= ifaces_.size()) {
      bad(at, "frame " + std::to_string(rec_.frames.size()) + ": to=" + std::to_string(f.to) +
                  " is not an interface");
    }
    if (!rec_.frames.empty() && f.time_ns < rec_.frames.back().time_ns) {
      bad(at, "frame " + std::to_string(rec_.frames.size()) + " goes back in time");
    }
    rec_.frames.push_back(f);
  }

  // "to=1 prio=0 tos=0x00 hash=0x1a2b3c4d segs=1 gso=0", keys in this order.
  void fields(size_t at, std::string_view text, ReplayFrame& f) const {
    static constexpr std::string_view kKeys[] = {"to", "prio", "tos", "hash", "segs", "gso"};
    uint64_t v[6] = {};
    for (size_t k = 0; k < 6; ++k) {
      const size_t sp = text.find(' ');
      const std::string_view tok = text.substr(0, sp);
      text = sp == std::string_view::npos ? std::string_view() : text.substr(sp + 1);
      if (!tok.starts_with(kKeys[k]) || tok.size() <= kKeys[k].size() + 1 ||
          tok[kKeys[k].size()] != '=') {
        bad(at, "comment: expected " + std::string(kKeys[k]) + "=VALUE, got '" +
                    std::string(tok.substr(0, 32)) + "'");
      }
      std::string_view val = tok.substr(kKeys[k].size() + 1);
      if (k == 0 && val == "-") {
        v[k] = kReplayNoHost;
        continue;
      }
      int base = 10;
      if (val.starts_with("0x")) {
        base = 16;
        val.remove_prefix(2);
      }
      const auto r = std::from_chars(val.data(), val.data() + val.size(), v[k], base);
      if (val.empty() || r.ec != std::errc() || r.ptr != val.data() + val.size()) {
        bad(at, "comment: " + std::string(kKeys[k]) + ": not a number");
      }
    }
    constexpr uint64_t kMax[] = {kReplayNoHost - 1, 255, 255, 0xffffffff, 65'535, 65'535};
    for (size_t k = 0; k < 6; ++k) {
      if (v[k] > kMax[k] && !(k == 0 && v[k] == kReplayNoHost)) {
        bad(at, "comment: " + std::string(kKeys[k]) + " out of range");
      }
    }
    if (v[4] == 0) {
      bad(at, "comment: segs must be at least 1");
    }
    f.to = static_cast<uint16_t>(v[0]);
    f.priority = static_cast<uint8_t>(v[1]);
    f.tos = static_cast<uint8_t>(v[2]);
    f.flow_hash = static_cast<uint32_t>(v[3]);
    f.gso_segs = static_cast<uint16_t>(v[4]);
    f.gso_size = static_cast<uint16_t>(v[5]);
  }

  std::span<const uint8_t> b_;
  bool swap_ = false;
  bool seen_section_ = false;
  std::vector<Interface> ifaces_;
  ReplayRecording rec_;
};

}  // namespace

ReplayRecording parse_replay(std::span<const uint8_t> bytes) { return Reader(bytes).run(); }

std::string encode_replay_header(const std::vector<std::string>& hosts,
                                 const std::string& comment) {
  std::string out;
  std::string shb;
  put32(shb, kByteOrderMagic);
  put16(shb, 1);
  put16(shb, 0);
  put32(shb, 0xffffffff);  // section length: unknown (-1)
  put32(shb, 0xffffffff);
  put_option(shb, kOptComment, comment);
  put_option(shb, kShbUserAppl, "nicsim");
  put32(shb, 0);  // opt_endofopt
  put_block(out, kShb, shb);
  for (const std::string& h : hosts) {
    std::string idb;
    put16(idb, kLinkTypeEthernet);
    put16(idb, 0);
    put32(idb, kReplaySnapLen);
    put_option(idb, kIfName, h);
    put_option(idb, kIfTsresol, std::string_view("\x09", 1));
    put32(idb, 0);
    put_block(out, kIdb, idb);
  }
  return out;
}

void encode_replay_frame(std::string& out, const ReplayFrame& f, std::span<const uint8_t> bytes) {
  const size_t captured = std::min<size_t>({bytes.size(), f.len, kReplaySnapLen});
  std::string epb;
  put32(epb, f.host);
  const auto ts = static_cast<uint64_t>(f.time_ns);
  put32(epb, static_cast<uint32_t>(ts >> 32));
  put32(epb, static_cast<uint32_t>(ts));
  put32(epb, static_cast<uint32_t>(captured));
  put32(epb, f.len);
  epb.append(reinterpret_cast<const char*>(bytes.data()), captured);
  pad4(epb);
  const std::string comment =
      "nicsim to=" + (f.to == kReplayNoHost ? std::string("-") : std::to_string(f.to)) +
      " prio=" + std::to_string(f.priority) + " tos=" + hex(f.tos, 2) +
      " hash=" + hex(f.flow_hash, 8) + " segs=" + std::to_string(f.gso_segs) +
      " gso=" + std::to_string(f.gso_size);
  put_option(epb, kOptComment, comment);
  put32(epb, 0);
  put_block(out, kEpb, epb);
}

}  // namespace nicsim::config
