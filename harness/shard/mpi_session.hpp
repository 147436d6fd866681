// The one MPI session of a process: every lobench program that runs over MPI ranks (the `lobench`
// commands with --shard or --data-parallel, shard_check, the shard benches, the tests under mpirun)
// initialises and finalises MPI through it, so that all of them ask for the same thread level.
#pragma once

namespace lobench::shard {

// MPI_Init_thread with MPI_THREAD_FUNNELED (OpenMP threads never call MPI; only the thread that made the
// session does), and MPI_Finalize once, when it is destroyed, unless MPI was finalised already. Destroyed
// by an exception on its way to main (which prints it), it finalises at exit instead, after the report.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

}  // namespace lobench::shard
