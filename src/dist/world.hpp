// The processes of a distributed run: MPI's world as numfuse sees it, and
// how the job ends when one rank cannot go on.
#pragma once

#include <mpi.h>

#include <string>

namespace nf::dist {

// numfuse's own communicator, a duplicate of MPI_COMM_WORLD, so that its
// messages never meet the program's. Throws ValueError before init().
MPI_Comm communicator();

// Ends every rank: prints "numfuse: rank R of N: <why>; ending every rank"
// on standard error and calls MPI_Abort, which mpirun answers by stopping
// the others. For what cannot be undone on one rank alone (a collective the
// others wait in, a communicator NCCL has broken).
[[noreturn]] void end_job(const std::string& why);

// Has finalize() run at exit before every exit handler registered so far.
// init() calls it, and so does each NCCL communicator once made: making one
// starts NCCL's own CUDA runtime (and numfuse::dist's), whose exit handlers
// come later, and a communicator destroyed after they ran left the heap
// broken (glibc aborted in MPI_Finalize, on the H200s with NCCL 2.28).
void finalize_at_exit();

}  // namespace nf::dist
