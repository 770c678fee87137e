// SPDX-License-Identifier: BSD-3-Clause
// Replaces the global operator new and delete of a test program: while allocations::counting is on,
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
