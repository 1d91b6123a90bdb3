// init() and finalize(), and what every collective asks of the world: its
// ranks, numfuse's communicator, and how the job ends.
#include "dist/world.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "cuda/devices.hpp"
#include "dist/transport.hpp"
#include "numfuse/device.hpp"
#include "numfuse/dist.hpp"
#include "numfuse/errors.hpp"

namespace nf::dist {
namespace {

struct World {
  bool initialized = false;
  bool started_mpi = false;  // whether finalize() ends MPI too
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  std::terminate_handler previous_terminate = nullptr;
};

World g_world;

const World& world() {
  if (!g_world.initialized) {
    throw ValueError("nf::dist: call nf::dist::init() first, once, before any collective");
  }
  return g_world;
}

// An exception nobody caught ends this rank; the others would wait for it
// at their next collective until NF_DIST_TIMEOUT, so end them now, saying why.
[[noreturn]] void on_terminate() {
  std::string why = "std::terminate was called";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      why = std::string("an uncaught exception: ") + x.what();
    } catch (...) {
      why = "an uncaught exception of a type not derived from std::exception";
    }
  }
  end_job(why);
}

int local_rank_of(MPI_Comm comm, int rank) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  return local;
}

// One GPU a process: the local rank picks it, as `mpirun -np <GPUs>` expects.
void choose_device(const World& w) {
  if (default_device().kind != Device::Kind::cuda) return;
  const int gpus = cuda::device_count();
  if (w.local_rank >= gpus) {
    throw CudaError("nf::dist::init: rank " + std::to_string(w.rank) + " is process " +
                    std::to_string(w.local_rank + 1) + " on its machine, which has " +
                    std::to_string(gpus) + " GPU(s): start one process a GPU (mpirun -np " +
                    std::to_string(gpus) + "), or set NF_DEVICE=cpu for the CPU backend");
  }
  set_default_device({Device::Kind::cuda, w.local_rank});
}

}  // namespace

void init() {
  if (g_world.initialized) return;
  World w;
  int mpi_ready = 0;
  MPI_Initialized(&mpi_ready);
  if (!mpi_ready) {
    // Collectives are called from one thread; numfuse's own threads never
    // call MPI.
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    w.started_mpi = true;
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &w.comm);
  MPI_Comm_rank(w.comm, &w.rank);
  MPI_Comm_size(w.comm, &w.size);
  w.local_rank = local_rank_of(w.comm, w.rank);
  choose_device(w);
  w.previous_terminate = std::set_terminate(on_terminate);
  w.initialized = true;
  g_world = w;
  finalize_at_exit();
}

void finalize() {
  if (!g_world.initialized) return;
  close_device_transports();
  MPI_Comm_free(&g_world.comm);
  std::set_terminate(g_world.previous_terminate);
  const bool end_mpi = g_world.started_mpi;
  g_world = World{};
  if (end_mpi) MPI_Finalize();
}

bool initialized() {
  return g_world.initialized;
}

int rank() {
  return world().rank;
}

int size() {
  return world().size;
}

int local_rank() {
  return world().local_rank;
}

// Exit handlers run last registered first; finalize() does nothing once
// done, so registering it again only moves it earlier.
void finalize_at_exit() {
  std::atexit([] {
    if (g_world.initialized) finalize();
  });
}

MPI_Comm communicator() {
  return world().comm;
}

void end_job(const std::string& why) {
  std::fprintf(stderr, "numfuse: rank %d of %d: %s; ending every rank\n", g_world.rank,
               g_world.size, why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

}  // namespace nf::dist
