#include "nicsim/model/nic.h"

// The Nic interface is header-only; this unit anchors nicsim_model_nic.
