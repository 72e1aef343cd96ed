#pragma once
// Reading configuration text safely: scenario and preset files come from users, and a scenario
// may be run by `nicsim emulate` as root. A path that is not a regular file (a directory, a
// FIFO without a writer, /dev/zero), a file larger than kMaxConfigBytes or TOML nested deeper
// than kMaxKeyDepth is refused with a one-line ConfigError before the TOML parser sees it (the
// parser recurses per dotted key part and per nested array/inline table, so an 80 KB file of
// dotted parts overflowed the stack). Limits and reasons: docs/scenarios.md "Limits".

#include <cstddef>
#include <string>
#include <string_view>

namespace nicsim::config {

// Largest scenario or preset file nicsim reads: 4 MiB (the largest shipped file is < 20 KB;
// a generated 1,000-host network is ~300 KB).
inline constexpr size_t kMaxConfigBytes = size_t{4} << 20;

// Deepest TOML nesting accepted: parts of one dotted key (a.b.c is 3) plus the arrays and
// inline tables open around it. The deepest key nicsim knows has 8 parts
// (routers.r.interfaces.i.qdisc.class[0].qdisc.limit).
inline constexpr size_t kMaxKeyDepth = 64;

// The whole text of `path`, or a ConfigError naming the file and why it cannot be read
// (missing, permission denied, a symlink loop, a directory, not a regular file, too large).
std::string read_config_text(const std::string& path, size_t max_bytes = kMaxConfigBytes);

// Throws ConfigError at the line and column where `text` nests deeper than `max_depth`
// (dotted key parts, arrays and inline tables; strings and comments are skipped).
void check_toml_depth(std::string_view text, const std::string& file,
                      size_t max_depth = kMaxKeyDepth);

}  // namespace nicsim::config
