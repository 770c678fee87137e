// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file gpu_aware.hpp
/// @brief Whether MPI reads and writes device memory itself (a GPU-aware
/// MPI) or messages are staged through pinned host buffers: the option
/// (plan_options::device_mpi), else HALOSHIFT_GPU_AWARE=0|1, else the MPI's
/// own query where it has one, else staging. Plain C++ (no GPU runtime), so
/// that host tests check the decision.
///
/// The MPI's answer is often wrong in the wild (LAMMPS #4027: a CUDA-aware
/// build on a node whose transport is not), hence the variable, which a job
/// script sets without recompiling, and the safe default: staging costs
/// copies, a wrong "direct" costs a crash.

#include <mpi.h>

#include <cstdlib>
#include <string>
#include <string_view>
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_Query_cuda_support, MPIX_Query_rocm_support
#endif

#include "../../error.hpp"
#include "../../log.hpp"
#include "../../memory/spaces.hpp"

namespace haloshift::detail::batch {

/// The runtime a device executor runs on, for the MPI's query.
enum class gpu_runtime { cuda, rocm };

/// The decision and the reason for it, as the log says it.
struct mpi_reach {
  bool direct = false;
  std::string why;
};

/// The MPI's answer `yes` to `call`, as the decision says it.
inline mpi_reach mpi_answer(bool yes, const char* call) {
  return {yes, std::string("MPI query: ") + call + (yes ? " says yes" : " says no")};
}

/// What the MPI says of itself: Open MPI's MPIX_Query_cuda_support() / MPIX_Query_rocm_support(),
/// MPICH's MPIX_GPU_query_support(), each only where the MPI in use declares it; else staging.
inline mpi_reach query_mpi(gpu_runtime runtime) {
  [[maybe_unused]] const bool cuda = runtime == gpu_runtime::cuda;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  if (cuda) return mpi_answer(MPIX_Query_cuda_support() == 1, "MPIX_Query_cuda_support()");
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  if (cuda) return {false, "MPI built without CUDA support (MPIX_CUDA_AWARE_SUPPORT is 0)"};
#endif
#if defined(MPIX_ROCM_AWARE_SUPPORT) && MPIX_ROCM_AWARE_SUPPORT
  if (!cuda) return mpi_answer(MPIX_Query_rocm_support() == 1, "MPIX_Query_rocm_support()");
#elif defined(MPIX_ROCM_AWARE_SUPPORT)
  if (!cuda) return {false, "MPI built without ROCm support (MPIX_ROCM_AWARE_SUPPORT is 0)"};
#endif
#if defined(MPIX_GPU_SUPPORT_CUDA) && defined(MPIX_GPU_SUPPORT_HIP)
  int supported = 0;
  if (MPIX_GPU_query_support(cuda ? MPIX_GPU_SUPPORT_CUDA : MPIX_GPU_SUPPORT_HIP, &supported) == MPI_SUCCESS)
    return mpi_answer(supported != 0, cuda ? "MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA)"
                                           : "MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP)");
#endif
  return {false, std::string("default: this MPI has no query for ") + (cuda ? "CUDA" : "ROCm") + " support"};
}

/// Raises haloshift::error naming plan_options.device_mpi unless `path` is one of mpi_path's values.
inline void check_mpi_path(memory::mpi_path path) {
  if (path != memory::mpi_path::detect && path != memory::mpi_path::direct && path != memory::mpi_path::staged)
    throw error("plan_options.device_mpi: invalid value " + std::to_string(static_cast<long long>(path)) +
                " (use mpi_path::detect, mpi_path::direct or mpi_path::staged)");
}

/// The decision for `path` (memory::mpi_path): the option, else HALOSHIFT_GPU_AWARE, else `ask()`
/// (the MPI's query for a GPU; the emulated device has none to ask). A value of the variable other
/// than 0 or 1 raises haloshift::error (empty counts as unset). Read at each decision, like
/// HALOSHIFT_CHECKS.
template <class Ask>
mpi_reach decide_mpi_reach(memory::mpi_path path, Ask&& ask) {
  check_mpi_path(path);
  if (path == memory::mpi_path::direct) return {true, "plan_options::device_mpi = mpi_path::direct"};
  if (path == memory::mpi_path::staged) return {false, "plan_options::device_mpi = mpi_path::staged"};
  const char* variable = std::getenv("HALOSHIFT_GPU_AWARE");
  const std::string_view value = variable ? variable : "";
  if (value == "1") return {true, "environment: HALOSHIFT_GPU_AWARE=1"};
  if (value == "0") return {false, "environment: HALOSHIFT_GPU_AWARE=0"};
  if (!value.empty())
    throw error("HALOSHIFT_GPU_AWARE is '" + std::string(value) +
                "': set it to 1 (MPI reads device memory), 0 (stage through the host), or unset it to ask the MPI");
  return ask();
}
inline mpi_reach decide_mpi_reach(memory::mpi_path path, gpu_runtime runtime) {
  return decide_mpi_reach(path, [runtime] { return query_mpi(runtime); });
}

/// The decision, logged (info) once by rank 0 of MPI_COMM_WORLD: `<executor> executor: messages
/// <go to MPI from device memory | are staged through pinned host memory> (<why>)`.
inline bool logged(const mpi_reach& r, std::string_view executor) {
  int initialized = 0, rank = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    log_message(log_level::info,
                std::string(executor) + " executor: messages " +
                    (r.direct ? "go to MPI from device memory" : "are staged through pinned host memory") + " (" +
                    r.why + ")");
  return r.direct;
}

inline bool mpi_reaches_device(memory::mpi_path path, gpu_runtime runtime, std::string_view executor) {
  return logged(decide_mpi_reach(path, runtime), executor);
}

}  // namespace haloshift::detail::batch
