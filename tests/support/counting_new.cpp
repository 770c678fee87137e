// SPDX-License-Identifier: BSD-3-Clause
// Replaces the global operator new and delete of a test program (every form): while allocations::counting is on,
// every operator new is counted. Compiled on its own (not in a unity source), so no other file sees
// these definitions and GCC does not take the malloc/free inside them for a mismatched new/delete.
#include "counting_new.hpp"

#include <cstdlib>
#include <new>

namespace allocations {
std::atomic<bool> counting{false};
std::atomic<long> count{0};
}  // namespace allocations

void* operator new(std::size_t n) {
  if (allocations::counting) ++allocations::count;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  if (allocations::counting) ++allocations::count;
  const std::size_t align = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too: with the sanitizers the runtime provides every form it is not given, and
// memory from its forms must not reach the free() below.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (allocations::counting) ++allocations::count;
  return std::malloc(n ? n : 1);
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  if (allocations::counting) ++allocations::count;
  const std::size_t align = static_cast<std::size_t>(a);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t& t) noexcept {
  return operator new(n, a, t);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
