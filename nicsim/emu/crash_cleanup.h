#pragma once
// Crash cleanup: if the emulator dies from SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT, a
// handler detaches and unlinks its /run/netns entries (umount2 + unlink: async-signal-safe
// system calls) before the signal takes its default action. Commands still inside the
// namespaces die with the emulator (their PID namespace's init has PR_SET_PDEATHSIG SIGKILL,
// process.h), and the kernel then destroys
// the namespaces and their links. SIGKILL cannot be caught: the next start removes those
// leftovers (remove_stale_namespaces, netns.h).
//
// The handler needs process-wide state (the paths), kept in a fixed static array: the one
// piece of global mutable state in the emulator process (process.cc's init, a separate
// process, keeps its command's pid in one too), set before the namespaces exist and cleared after
// they are gone.

#include <string>
#include <vector>

namespace nicsim::emu {

void install_crash_cleanup(const std::vector<std::string>& netns_names);
void clear_crash_cleanup();

}  // namespace nicsim::emu
