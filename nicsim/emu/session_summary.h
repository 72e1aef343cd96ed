#pragma once
// The end-of-run summary of one emulation (`nicsim emulate`, on stderr): frames and bytes per
// direction, each NIC model's counters and queues, the pcap, the real-time loop's timer error,
// release lateness and work per iteration, the frame ports and the emulator's CPU time.
// docs/emu.md explains each number.

#include <string>

#include "nicsim/emu/session.h"

namespace nicsim::emu {

// The summary, one fact per line, each line ending in '\n'.
std::string format_session_summary(const SessionResult& r);

}  // namespace nicsim::emu
