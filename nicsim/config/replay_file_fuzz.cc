// libFuzzer target: arbitrary bytes as a replay recording (`nicsim emulate --record`,
// config/replay_file.h) must never crash, hang or trip a sanitizer: parse_replay either refuses
// them with a ReplayFileError or returns a recording, which must survive the round trip
// encode -> parse unchanged. Run with scripts/fuzz.sh (seed corpus:
// nicsim/config/fuzz_corpus/replay_file/).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "nicsim/config/replay_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nicsim::config::ReplayRecording;
  ReplayRecording rec;
  try {
    rec = nicsim::config::parse_replay(std::span<const uint8_t>(data, size));
  } catch (const nicsim::config::ReplayFileError&) {
    return 0;  // refused with a message: fine
  }
  std::string again = nicsim::config::encode_replay_header(rec.hosts, "fuzz");
  for (const nicsim::config::ReplayFrame& f : rec.frames) {
    if (f.time_ns < 0) {
      return 0;  // a negative if_tsoffset: not writable as an unsigned timestamp
    }
    nicsim::config::encode_replay_frame(again, f, {});
  }
  const ReplayRecording back = nicsim::config::parse_replay(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(again.data()), again.size()));
  if (!(back == rec)) {
    std::fprintf(stderr, "replay round trip changed the recording (%zu frames)\n",
                 rec.frames.size());
    std::abort();
  }
  return 0;
}
