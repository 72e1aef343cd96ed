#pragma once
// FrameRecorder — `nicsim emulate --record FILE`: every frame a host's kernel handed to its
// emulated NIC, at the time it entered the NIC model (ns since the emulation's time 0), with
// its sending host, length, headers and the classification the models read (priority, TOS,
// flow hash, destination host, GSO shape), as the pcapng recording config/replay_file.h
// defines. `[[traffic.replay]]` feeds the file to `nicsim run` (docs/emu.md "Replay").
// Buffered stdio writes (1 MiB); errors are reported by close(), never thrown mid-run.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "nicsim/emu/datapath.h"

namespace nicsim::emu {

class FrameRecorder final : public InputTap {
 public:
  // Creates (truncates) `path` and writes the section header and one interface per host
  // (`hosts`: the scenario's host names in order). `realtime_at_zero_ns`: CLOCK_REALTIME of
  // time 0, written in the file's comment. Throws std::runtime_error naming the file when it
  // cannot be opened.
  FrameRecorder(const std::string& path, const std::vector<std::string>& hosts,
                int64_t realtime_at_zero_ns);
  FrameRecorder(const FrameRecorder&) = delete;
  FrameRecorder& operator=(const FrameRecorder&) = delete;
  ~FrameRecorder() override;

  void on_input(size_t host, Time t, const Packet& frame) override;

  // Flushes and closes; returns "" or the error ("FILE: reason").
  std::string close();
  uint64_t frames() const { return frames_; }

 private:
  void write(const std::string& bytes);

  std::string path_;
  std::FILE* file_ = nullptr;
  std::string block_;  // scratch: one encoded frame
  uint64_t frames_ = 0;
  int error_ = 0;  // first errno seen
};

}  // namespace nicsim::emu
