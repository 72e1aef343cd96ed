#include "nicsim/model/ethernet.h"

// Header-only today; this translation unit gives the model library its anchor.
namespace nicsim::model {
static_assert(EthernetOverhead{}.wire_bytes(1514) == 1538);
static_assert(EthernetOverhead{}.wire_bytes(42) == 84);  // minimum frame: 8 + 64 + 12
}  // namespace nicsim::model
