#include "nicsim/campaign/mpi_campaign.h"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "nicsim/report/json.h"

#ifdef NICSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace nicsim::campaign {

bool launched_by_mpi() {
  // OpenMPI's mpirun, PMIx (OpenMPI 4 and Slurm's srun --mpi=pmix), PMI-1/2 (srun --mpi=pmi2).
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(v) != nullptr) {
      return true;
    }
  }
  return false;
}

#ifndef NICSIM_HAVE_MPI

bool mpi_available() { return false; }
MpiWorld::MpiWorld() { throw std::runtime_error("nicsim was built without MPI (NICSIM_MPI)"); }
MpiWorld::~MpiWorld() = default;
void MpiWorld::abort(int status) const { std::exit(status); }
CampaignOutcome run_campaign_mpi(const config::LoadedScenario&, const CampaignParams&,
                                 ResultsSpool&, const CampaignCallbacks&, const std::atomic<bool>&,
                                 const MpiWorld&) {
  throw std::runtime_error("nicsim was built without MPI (NICSIM_MPI)");
}

#else

namespace {

constexpr int kTag = 14;
constexpr char kDone = 'D';
constexpr char kFailed = 'F';
constexpr char kCancelled = 'C';

// One finished job as bytes: a status byte, then the run as a results document (with its
// wall-clock facts in meta.runs) or the error text.
std::string encode(Outcome&& o) {
  if (o.status == Outcome::Status::kFailed) {
    return kFailed + o.error;
  }
  if (o.status == Outcome::Status::kCancelled) {
    return std::string(1, kCancelled);
  }
  report::Results r;
  r.meta.nicsim_version = "rank";
  r.meta.runs.push_back(o.meta);
  r.runs.push_back(std::move(o.run));
  return kDone + report::to_json(r);
}

Outcome decode(const std::string& bytes, size_t index) {
  Outcome o;
  o.index = index;
  if (bytes.empty() || bytes[0] == kCancelled) {
    o.status = Outcome::Status::kCancelled;
  } else if (bytes[0] == kFailed) {
    o.status = Outcome::Status::kFailed;
    o.error = bytes.substr(1);
  } else {
    report::Results r = report::results_from_json(std::string_view(bytes).substr(1));
    o.run = std::move(r.runs.at(0));
    o.meta = r.meta.runs.at(0);
  }
  return o;
}

void send_to_root(const std::string& bytes) {
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, 0, kTag, MPI_COMM_WORLD);
}

std::string receive_from(int rank) {
  MPI_Status status;
  MPI_Probe(rank, kTag, MPI_COMM_WORLD, &status);
  int n = 0;
  MPI_Get_count(&status, MPI_CHAR, &n);
  std::string bytes(static_cast<size_t>(n), '\0');
  MPI_Recv(bytes.data(), n, MPI_CHAR, rank, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

}  // namespace

bool mpi_available() { return true; }

MpiWorld::MpiWorld() {
  // Serialized: rank 0 makes its MPI calls from run_ordered's worker thread, one at a time.
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiWorld::~MpiWorld() { MPI_Finalize(); }

void MpiWorld::abort(int status) const {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::exit(status);
}

CampaignOutcome run_campaign_mpi(const config::LoadedScenario& scenario,
                                 const CampaignParams& params, ResultsSpool& spool,
                                 const CampaignCallbacks& cb, const std::atomic<bool>& stop,
                                 const MpiWorld& world) {
  const std::vector<Job> jobs = plan_jobs(scenario, params.plan);
  const auto ranks = static_cast<size_t>(world.size());
  const auto me = static_cast<size_t>(world.rank());
  CampaignOutcome out;
  out.total = out.planned = jobs.size();
  if (me != 0) {
    for (size_t i = me; i < jobs.size(); i += ranks) {
      Outcome o = run_job(jobs[i], stop);
      const bool last = o.status != Outcome::Status::kDone;
      send_to_root(encode(std::move(o)));
      if (last) {
        break;
      }
    }
    return out;
  }
  // Rank 0, one job at a time: its own share simulated, the others' received, all in order.
  const Work work = [&](size_t i, const std::atomic<bool>& cancel) {
    if (i % ranks == 0) {
      Outcome o = run_job(jobs[i], cancel, cb.progress);
      if (cb.on_finished) {
        cb.on_finished(i);
      }
      return o;
    }
    Outcome o = decode(receive_from(static_cast<int>(i % ranks)), i);
    if (cb.on_finished) {
      cb.on_finished(i);
    }
    return o;
  };
  run_ordered(jobs.size(), 1, work, spooling_sink(jobs, spool, cb, out), stop);
  out.delivered = out.indexes.size();
  out.interrupted = stop.load() && out.error.empty();
  return out;
}

#endif

}  // namespace nicsim::campaign
