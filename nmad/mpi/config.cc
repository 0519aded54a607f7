#include "nmad/mpi/config.h"

#include <cctype>

namespace rondo::nmad::mpi {

std::string CollVariable(coll::Collective c) {
  std::string var = "RONDO_COLL_";
  for (char ch : coll::CollectiveName(c))
    var += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return var;
}

std::vector<base::ConfigDecl> MpiDeclarations() {
  std::vector<base::ConfigDecl> out;
  for (int i = 0; i < coll::kNumCollectives; ++i) {
    const auto c = static_cast<coll::Collective>(i);
    std::string allowed = "auto";
    for (coll::Algorithm a : coll::AlgorithmsFor(c))
      allowed += "|" + std::string(coll::AlgorithmName(a));
    out.push_back({CollVariable(c), "mpi", "choice", "auto", allowed,
                   "algorithm of every MPI_" +
                       std::string(coll::CollectiveName(c)) +
                       " (auto: by size and process count)"});
  }
  out.push_back({"RONDO_MPI_THREAD_LEVEL", "mpi", "choice", "single",
                 "single|funneled|serialized|multiple",
                 "the thread level MPI_Init provides (MPI_Init_thread "
                 "provides the level asked for); below multiple, MPI calls "
                 "from several threads at once are erroneous, and the "
                 "request pool takes no locked instruction"});
  out.push_back({"RONDO_COLL_SEGMENT_BYTES", "mpi", "integer", "65536",
                 "a positive number of bytes",
                 "segment size of pipelined collectives"});
  out.push_back({"RONDO_COLL_RADIX", "mpi", "integer", "4", "2..64",
                 "radix of the k-ary collective algorithms"});
  out.push_back({"RONDO_RMA_SHM", "mpi", "boolean", "1",
                 "1|0 (also true|false, yes|no, on|off)",
                 "one-sided windows of MPI_Win_allocate(_shared) whose ranks "
                 "share a node use load/store in one shared segment (0: "
                 "active messages served by the target's engine)"});
  out.push_back({"RONDO_RMA_UCX", "mpi", "choice", "auto", "auto|1|0",
                 "one-sided windows off the shared-memory path put and "
                 "get with UCX's own one-sided operations to the ranks UCX "
                 "reaches (rail 0), and update 4/8-byte integers with its "
                 "atomics when it reaches every rank; auto: not to ranks "
                 "whose one-sided lanes are UCX's tcp, which emulates them "
                 "more slowly than active messages; 1: those too; 0: active "
                 "messages for all; MPI_Win_get_info's rondo_rma_path says "
                 "ucx, ucx+am or am"});
  out.push_back({"RONDO_COLL_SHM", "mpi", "boolean", "1",
                 "1|0 (also true|false, yes|no, on|off)",
                 "small blocking MPI_Barrier, MPI_Bcast, MPI_Reduce, "
                 "MPI_Allreduce, MPI_Gather, MPI_Allgather, MPI_Scatter and "
                 "MPI_Alltoall, and larger blocking MPI_Allreduce of "
                 "contiguous types, of a communicator whose ranks share a "
                 "node go through flags and buffers in a segment those ranks "
                 "map (0: the message-based algorithms; any rank's 0 turns "
                 "it off for the communicator)"});
  out.push_back({"RONDO_COLL_SHM_BYTES", "mpi", "integer", "16384", "0..65536",
                 "the largest message (bytes) of those collectives on the "
                 "shared-memory path (the smallest of the ranks' values)"});
  out.push_back({"RONDO_MPICC_CC", "wrappers", "string", "",
                 "a C compiler command (default: the one found at install)",
                 "the C compiler rondo-mpicc runs"});
  out.push_back({"RONDO_MPICXX_CXX", "wrappers", "string", "",
                 "a C++ compiler command (default: the one found at install)",
                 "the C++ compiler rondo-mpicxx runs"});
  return out;
}

namespace {
const base::ConfigRegistration kMpiConfig(MpiDeclarations);
}  // namespace

}  // namespace rondo::nmad::mpi
