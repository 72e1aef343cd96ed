#include "nicsim/report/emodel.h"

#include <algorithm>
#include <cmath>

namespace nicsim::report {
namespace {

// Ie / Bpl: ITU-T G.113 Appendix I (G.711 with PLC; G.729A + VAD).
constexpr VoipCodec kCodecs[] = {
    {"g711", 172, Duration::ms(20), {0.0, 25.1}},
    {"g729a", 32, Duration::ms(20), {11.0, 19.0}},
};

}  // namespace

const VoipCodec* voip_codec(std::string_view name) {
  for (const VoipCodec& c : kCodecs) {
    if (c.name == name) {
      return &c;
    }
  }
  return nullptr;
}

std::string_view voip_codec_names() { return "g711, g729a"; }

double emodel_idd(double ta_ms) {
  if (ta_ms <= 100.0) {
    return 0.0;
  }
  const double x = std::log2(ta_ms / 100.0);
  return 25.0 * (std::pow(1.0 + std::pow(x, 6.0), 1.0 / 6.0) -
                 3.0 * std::pow(1.0 + std::pow(x / 3.0, 6.0), 1.0 / 6.0) + 2.0);
}

double emodel_ie_eff(const EModelCodec& codec, double ppl_pct, double burst_r) {
  if (ppl_pct <= 0.0) {
    return codec.ie;
  }
  return codec.ie + (95.0 - codec.ie) * ppl_pct / (ppl_pct / burst_r + codec.bpl);
}

double emodel_r(const EModelCodec& codec, double ta_ms, double ppl_pct, double burst_r) {
  return 93.2 - emodel_idd(ta_ms) - emodel_ie_eff(codec, ppl_pct, burst_r);
}

double emodel_mos(double r) {
  if (r < 0.0) {
    return 1.0;
  }
  if (r > 100.0) {
    return 4.5;
  }
  // The cubic dips just below 1 for 0 < R < 6.5 (0.989 at R = 3.2); MOS is on the 1..5 scale
  // of ITU-T P.800, so a call that bad is 1.
  return std::max(1.0, 1.0 + 0.035 * r + r * (r - 60.0) * (100.0 - r) * 7e-6);
}

}  // namespace nicsim::report
