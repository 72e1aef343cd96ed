#pragma once
// CAKE's tins: the Diffserv presets (besteffort, precedence, diffserv8, diffserv4, diffserv3)
// with their DSCP -> tin tables, per-tin bandwidth thresholds and DRR quanta (cake_config_* in
// Linux net/sched/sch_cake.c, torvalds/linux commit 0280f429dc21; tc-cake(8) "PRIORITY QUEUE
// PARAMETERS"). Behaviour ported, no code copied.
//
// Tin numbering is the kernel's: tin 0 is Best Effort in diffserv3/4 (Bulk is tin 1), so
// `order` lists the tins in tc's display order (lowest priority first for diffserv3/4).

#include <array>
#include <cstdint>
#include <string>

namespace nicsim::algo {

enum class CakeDiffserv : uint8_t {
  kDiffserv3,   // CAKE_DIFFSERV_DIFFSERV3, the default
  kDiffserv4,   // CAKE_DIFFSERV_DIFFSERV4
  kDiffserv8,   // CAKE_DIFFSERV_DIFFSERV8
  kBesteffort,  // CAKE_DIFFSERV_BESTEFFORT
  kPrecedence,  // CAKE_DIFFSERV_PRECEDENCE
};

inline constexpr int kCakeMaxTins = 8;  // CAKE_MAX_TINS

struct CakeTinLayout {
  int tin_count = 1;
  const std::array<uint8_t, 64>* tin_index = nullptr;  // DSCP -> tin
  std::array<uint8_t, kCakeMaxTins> order{};           // display position -> tin
  std::array<uint64_t, kCakeMaxTins> rate{};           // bytes/s threshold per tin (0 = unlimited)
  std::array<uint16_t, kCakeMaxTins> quantum{};        // tin DRR weight (unshaped mode)
  std::array<const char*, kCakeMaxTins> name{};        // tc -s column name
};

// The layout of `mode` for a base rate of `rate` bytes/s (0 = unlimited).
CakeTinLayout cake_tin_layout(CakeDiffserv mode, uint64_t rate);

}  // namespace nicsim::algo
