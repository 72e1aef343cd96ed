#pragma once
// The ITU-T G.107 E-model (Recommendation ITU-T G.107 (06/2015), "The E-model: a computational
// model for use in transmission planning"), reduced to what a packet network changes: delay and
// packet loss. Everything else keeps G.107's default values (Table 3), for which the basic
// signal-to-noise ratio minus the simultaneous impairments is R = 93.2 (Ro − Is, §7.1).
//
//   R = 93.2 − Idd(Ta) − Ie,eff                                   (§7.1 eq. 7-1, A = 0)
//   Idd = 0 for Ta ≤ 100 ms, else
//         25 {(1 + X^6)^(1/6) − 3 (1 + (X/3)^6)^(1/6) + 2},  X = log2(Ta / 100 ms)   (7-27, 7-28;
//         mT = 100 ms, sT = 1, the defaults)
//   Ie,eff = Ie + (95 − Ie) · Ppl / (Ppl / BurstR + Bpl)         (7-29)
//   BurstR = 1 / (p + q) for a two-state Markov loss process with p = P(loss | previous
//            received), q = P(received | previous lost); 1 for random loss  (7-30 note)
//   MOS_CQE = 1 for R < 0; 1 + 0.035 R + R (R − 60)(100 − R) · 7·10^-6 for 0 ≤ R ≤ 100; 4.5
//            above                                                 (Annex B, eq. B-4);
//            the cubic falls to 0.989 for 0 < R < 6.5, held at 1 (the P.800 scale's floor)
//
// Left out (their defaults are inside 93.2): talker echo Idte and listener echo Idle (echo is
// taken as cancelled), the advantage factor A (0: a wired call), quantizing distortion.
// Ie and Bpl per codec: ITU-T G.113 Appendix I (Table I.1, I.3): G.711 with packet loss
// concealment Ie = 0, Bpl = 25.1; G.729A + VAD Ie = 11, Bpl = 19.0.

#include <cstdint>
#include <string_view>

#include "nicsim/core/time.h"

namespace nicsim::report {

struct EModelCodec {
  double ie = 0;   // equipment impairment factor
  double bpl = 1;  // packet-loss robustness factor (> 0)
};

// A voice codec as [[traffic.voip]] sends it: one RTP packet of `payload` bytes (codec frames
// + the 12-byte RTP header) every `interval`, and its E-model factors.
struct VoipCodec {
  std::string_view name;
  int64_t payload = 0;  // UDP payload bytes: RTP header + codec frames
  Duration interval;
  EModelCodec emodel;
};
// "g711": 160 B of G.711 per 20 ms + RTP = 172 B (RFC 3551 §4.5.14 PCMU, ptime 20);
// "g729a": 2 x 10 B frames per 20 ms + RTP = 32 B (RFC 3551 §4.5.6). nullptr if unknown.
const VoipCodec* voip_codec(std::string_view name);
// The names, comma-separated, for error messages.
std::string_view voip_codec_names();

// Idd: the impairment of an absolute one-way (mouth-to-ear) delay `ta_ms`.
double emodel_idd(double ta_ms);
// Ie,eff for `ppl_pct` % packet loss with burst ratio `burst_r` (>= 1 bursty, 1 random).
double emodel_ie_eff(const EModelCodec& codec, double ppl_pct, double burst_r);
// R = 93.2 − Idd(ta_ms) − Ie,eff.
double emodel_r(const EModelCodec& codec, double ta_ms, double ppl_pct, double burst_r);
// MOS (conversational quality, estimated) from R (Annex B).
double emodel_mos(double r);

}  // namespace nicsim::report
