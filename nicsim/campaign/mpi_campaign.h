#pragma once
// A campaign over MPI ranks (built with OpenMPI when found: NICSIM_MPI, docs/campaigns.md).
// `mpirun -np N nicsim run FILE`: rank r simulates jobs r, r + N, r + 2N, ... in order and sends
// each finished run to rank 0 (the run's results JSON: exact, numbers round-trip); rank 0
// simulates its own share, receives the others' in the campaign's order, prints and writes the
// one results file, identical outside meta to a serial run. One run at a time per rank (run
// one rank per core); MPI's non-overtaking order between two ranks keeps one tag enough.

#include <atomic>

#include "nicsim/campaign/runner.h"

namespace nicsim::campaign {

// Whether this binary has MPI support at all.
bool mpi_available();
// Whether the process was started by an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx):
// only then is MPI initialised, so a plain `nicsim run` never touches MPI.
bool launched_by_mpi();

class MpiWorld {
 public:
  MpiWorld();   // MPI_Init (call only when launched_by_mpi())
  ~MpiWorld();  // MPI_Finalize
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ends every rank now (a run failed or Ctrl-C on rank 0: the others may wait in a send).
  [[noreturn]] void abort(int status) const;

 private:
  int rank_ = 0;
  int size_ = 1;
};

// Rank 0: the whole campaign into `spool` (callbacks as run_campaign). Other ranks: their
// share, sent to rank 0; their spool stays empty and the outcome has delivered = 0.
// params.until_ci and params.shard are not supported here (the caller refuses them).
CampaignOutcome run_campaign_mpi(const config::LoadedScenario& scenario,
                                 const CampaignParams& params, ResultsSpool& spool,
                                 const CampaignCallbacks& callbacks, const std::atomic<bool>& stop,
                                 const MpiWorld& world);

}  // namespace nicsim::campaign
