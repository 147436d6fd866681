#include "harness/shard/mpi_session.hpp"

#include <mpi.h>

#include <cstdlib>
#include <exception>

namespace lobench::shard {
namespace {

void finalize_once() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
}

MpiSession::~MpiSession() {
  // A failure every rank shares (RankFailure, a bad option) unwinds through here before main prints it.
  // MPI_Finalize waits for every rank; finalising now would let the first rank out print, exit with status
  // 2, and have mpirun kill the others before they print theirs. At exit, every rank has printed.
  if (std::uncaught_exceptions() > 0) {
    std::atexit(finalize_once);
    return;
  }
  finalize_once();
}

}  // namespace lobench::shard
