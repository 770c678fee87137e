// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file host_threads.hpp
/// @brief Placeholder until the host-threads executor lands: runs a launch on the calling thread.

#include <cstdlib>
#include <cstring>
#include <memory>

#include "host_run.hpp"
#include "segment.hpp"

namespace haloshift::detail::batch {

class host_threads final : public executor {
 public:
  explicit host_threads(int) {}
  const char* name() const noexcept override { return "host threads"; }
  bool host_accessible() const noexcept override { return true; }
  bool mpi_reaches_memory() const noexcept override { return true; }
  void* allocate(std::size_t bytes) override { return std::malloc(bytes); }
  void deallocate(void* p, std::size_t) noexcept override { std::free(p); }
  void* allocate_pinned(std::size_t bytes) override { return std::malloc(bytes); }
  void deallocate_pinned(void* p, std::size_t) noexcept override { std::free(p); }
  void upload(void* to, const void* from, std::size_t bytes) override { std::memcpy(to, from, bytes); }
  void to_host(void* to, const void* from, std::size_t bytes) override { std::memcpy(to, from, bytes); }
  void to_device(void* to, const void* from, std::size_t bytes) override { std::memcpy(to, from, bytes); }
  void run(const segment* table, const launch& l, const bases& b) override { run_all(table, l, b); }
  void synchronize() override {}
};

inline std::unique_ptr<executor> make_host_threads(int n) { return std::make_unique<host_threads>(n); }

}  // namespace haloshift::detail::batch
