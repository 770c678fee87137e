// SPDX-License-Identifier: BSD-3-Clause
// The emulated device space (memory/emulated_device.hpp): its memory faults on
// any host access outside the executor's launches and copies (checked in
// forked children), its executor runs hand-made segment tables (copies and
// plus/min/max combines over several bases, staged and "GPU-aware") exactly
// as a naive element loop says, and its errors name the call and the value.
// Hidden Catch2 tags: the ctest tests device_emulate.np<n> (label
// device-emulate) select them, the grid sweep skips them.

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <haloshift/auto.hpp>
#include <haloshift/haloshift.hpp>
#include <haloshift/memory/emulated_device.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../support/catch.hpp"
#include "../support/scoped_env.hpp"
#include "space_sweeps.hpp"

namespace {

namespace hs = haloshift;
namespace batch = hs::detail::batch;
using emulated = hs::memory::emulated_device;

/// Whether a host read of the byte at `p` kills a forked child with SIGSEGV. The child restores
/// the default action first (a sanitizer's handler would turn the fault into an exit code) and
/// dumps no core.
bool host_read_faults(const void* p) {
  const pid_t child = ::fork();
  if (child == 0) {
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    ::sigaction(SIGSEGV, &fallback, nullptr);
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    const unsigned char v = *static_cast<const volatile unsigned char*>(p);
    ::_exit(v == 0 ? 0 : 1);  // still alive: the read did not fault
  }
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child) return false;
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

/// HALOSHIFT_GPU_AWARE set for a scope (unset for nullopt), restored after.
class gpu_aware_env : scoped::env {
 public:
  explicit gpu_aware_env(std::optional<std::string> v) : scoped::env("HALOSHIFT_GPU_AWARE", std::move(v)) {}
};

TEST_CASE("emulated device memory faults on a host read, except inside copies", "[.device-emulate][emulated]") {
  double* d = emulated::allocate<double>(1000);
  CHECK(host_read_faults(d));
  CHECK(host_read_faults(d + 999));  // the last page too
  std::vector<double> in(1000), out(1000, -1.0);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = 0.5 * static_cast<double>(i) - 3;
  emulated::copy_to_device(d, in.data(), in.size() * sizeof(double));
  CHECK(host_read_faults(d));  // closed again after the copy
  emulated::copy_to_host(out.data(), d + 10, 20 * sizeof(double));
  CHECK(std::memcmp(out.data(), in.data() + 10, 20 * sizeof(double)) == 0);
  CHECK(host_read_faults(d + 10));
  // Device to device: both sides opened for the copy, both closed after it.
  std::int64_t* a = emulated::allocate<std::int64_t>(3);
  std::int64_t* b = emulated::allocate<std::int64_t>(0);  // a page of its own all the same
  CHECK(a != b);
  emulated::copy_to_device(a, d, 3 * sizeof(double));
  emulated::copy_to_host(out.data(), a, 3 * sizeof(double));
  CHECK(std::memcmp(out.data(), in.data(), 3 * sizeof(double)) == 0);
  CHECK(host_read_faults(a));
  CHECK(host_read_faults(d));
  emulated::deallocate(a);
  emulated::deallocate(b);
  emulated::deallocate(d);
  emulated::deallocate(nullptr);
}

TEST_CASE("the emulated device's errors name the call and the value", "[.device-emulate][emulated][errors]") {
  int on_host = 0;
  CHECK_THROWS_WITH(emulated::deallocate(&on_host),
                    Catch::Contains("emulated_device::deallocate: p = ") && Catch::Contains("was not returned"));
  int* d = emulated::allocate<int>(4);
  emulated::deallocate(d);
  CHECK_THROWS_WITH(emulated::deallocate(d), Catch::Contains("emulated_device::deallocate: p = 0x"));
  CHECK_THROWS_WITH(emulated::allocate<double>(std::size_t(-1) / 4),
                    Catch::Contains("emulated_device::allocate: n = " + std::to_string(std::size_t(-1) / 4)));
  CHECK_THROWS_WITH(emulated::allocate<char>(std::size_t(-1) - 8), Catch::Contains("emulated_device::allocate"));
  int* e = emulated::allocate<int>(4);
  const int four[4] = {1, 2, 3, 4};
  CHECK_THROWS_WITH(emulated::copy_to_device(&on_host, four, sizeof on_host),
                    Catch::Contains("emulated_device::copy_to_device: to = ") &&
                        Catch::Contains("is not inside memory from emulated_device::allocate"));
  CHECK_THROWS_WITH(emulated::copy_to_host(&on_host, four, sizeof on_host),
                    Catch::Contains("emulated_device::copy_to_host: from = "));
  CHECK_THROWS_WITH(emulated::copy_to_device(e, four, 1 << 20), Catch::Contains("(1048576 bytes)"));
  emulated::copy_to_device(e, four, 0);  // nothing to copy: no check either
  emulated::deallocate(e);
}

TEST_CASE("the emulated device reaches MPI directly when asked to, or when HALOSHIFT_GPU_AWARE=1 says so",
          "[.device-emulate][emulated][staging]") {
  using hs::memory::mpi_path;
  for (const char* v : {"", "0", "1"}) {
    const gpu_aware_env env(std::string{v});
    CHECK(emulated::make_executor(mpi_path::direct)->mpi_reaches_memory());
    CHECK_FALSE(emulated::make_executor(mpi_path::staged)->mpi_reaches_memory());
    CHECK(emulated::make_executor(mpi_path::detect)->mpi_reaches_memory() == (std::string(v) == "1"));
  }
  {
    const gpu_aware_env env(std::nullopt);
    CHECK_FALSE(emulated::make_executor(mpi_path::detect)->mpi_reaches_memory());
  }
  const gpu_aware_env env(std::string("yes"));
  CHECK_THROWS_WITH(emulated::make_executor(mpi_path::detect),
                    Catch::Contains("HALOSHIFT_GPU_AWARE is 'yes'"));
  CHECK(emulated::make_executor(mpi_path::staged)->name() == std::string("emulated device"));
  CHECK_FALSE(emulated::make_executor(mpi_path::staged)->host_accessible());
  CHECK_THROWS_WITH(emulated::make_executor(static_cast<mpi_path>(7)),
                    Catch::Contains("plan_options.device_mpi: invalid value 7"));
}

/// Host images of a launch's bases, and the same bases in executor memory.
struct bases_pair {
  std::vector<std::vector<std::byte>> host;
  batch::bases device;
};

/// A naive element loop over `segs`: what a launch of `op` over elements of type T must do.
template <class T>
void apply_naive(std::vector<std::vector<std::byte>>& img, const std::vector<batch::segment>& segs,
                 batch::batch_op op) {
  for (const batch::segment& s : segs)
    for (std::int64_t r = 0; r < s.repeat; ++r)
      for (std::uint32_t e = 0; e < s.row_bytes; e += sizeof(T)) {
        std::byte* to = img[s.to_base].data() + s.to + r * s.to_stride + e;
        const std::byte* from = img[s.from_base].data() + s.from + r * s.from_stride + e;
        T a, b;
        std::memcpy(&a, to, sizeof a);
        std::memcpy(&b, from, sizeof b);
        if (op == batch::batch_op::copy) a = b;
        if (op == batch::batch_op::plus) a = static_cast<T>(a + b);
        if (op == batch::batch_op::min) a = b < a ? b : a;
        if (op == batch::batch_op::max) a = a < b ? b : a;
        std::memcpy(to, &a, sizeof a);
      }
}

constexpr int user_bases = 3;
constexpr std::int64_t window_elements = 64;

/// Segment k of a phase over elements of T: rows of 1-5 elements, 1-4 rows, strides with gaps,
/// between user base k % 3 (its own window, so that no two segments write the same cell) and the
/// staging (base 3, consecutive); `pack` reads the user bases, else writes them.
template <class T>
std::vector<batch::segment> phase_table(int segments, bool pack, batch::launch& l) {
  std::vector<batch::segment> out;
  std::int64_t staged = 0;
  for (int k = 0; k < segments; ++k) {
    batch::segment s;
    const std::int64_t row = 1 + k % 5, stride = row + k % 3;
    s.row_bytes = static_cast<std::uint32_t>(row * sizeof(T));
    s.repeat = static_cast<std::uint32_t>(1 + k % 4);
    const std::int64_t user = (k / user_bases * window_elements + k % 7) * static_cast<std::int64_t>(sizeof(T));
    const std::int64_t staging = staged * static_cast<std::int64_t>(sizeof(T));
    s.from = pack ? user : staging;
    s.to = pack ? staging : user;
    s.from_stride = pack ? stride * static_cast<std::int64_t>(sizeof(T)) : s.row_bytes;
    s.to_stride = pack ? s.row_bytes : stride * static_cast<std::int64_t>(sizeof(T));
    s.from_base = static_cast<std::uint16_t>(pack ? k % user_bases : user_bases);
    s.to_base = static_cast<std::uint16_t>(pack ? user_bases : k % user_bases);
    s.first_word = static_cast<std::uint64_t>(staged * static_cast<std::int64_t>(sizeof(T)) / l.word_bytes);
    staged += row * s.repeat;
    out.push_back(s);
  }
  l.first = 0;
  l.count = out.size();
  l.words = static_cast<std::uint64_t>(staged * static_cast<std::int64_t>(sizeof(T)) / l.word_bytes);
  return out;
}

/// Runs `table` through `ex` (uploaded to executor memory, as a batched exchange does) and on the
/// host images; false with `why` when any base then differs.
bool run_both(batch::executor& ex, bases_pair& b, const std::vector<batch::segment>& table, const batch::launch& l,
              void (*naive)(std::vector<std::vector<std::byte>>&, const std::vector<batch::segment>&, batch::batch_op),
              std::string& why) {
  const std::size_t table_bytes = table.size() * sizeof(batch::segment);
  void* device_table = ex.allocate(table_bytes);
  ex.upload(device_table, table.data(), table_bytes);
  ex.run(static_cast<const batch::segment*>(device_table), l, b.device);
  ex.synchronize();
  ex.deallocate(device_table, table_bytes);
  naive(b.host, table, l.op);
  for (std::size_t i = 0; i < b.host.size(); ++i) {
    std::vector<std::byte> got(b.host[i].size());
    if (i < user_bases)
      emulated::copy_to_host(got.data(), b.device.at[i], got.size());
    else
      ex.to_host(got.data(), b.device.at[i], got.size());
    ex.synchronize();
    if (std::memcmp(got.data(), b.host[i].data(), got.size()) != 0) why += "base " + std::to_string(i) + " differs; ";
  }
  return why.empty();
}

/// A pack (copy, in words of `copy_word` bytes), then an unpack that combines with `op`, over
/// elements of T in three user arrays and one staging buffer; checked against the naive loop, and
/// with `faults` that every array is closed again after the launches (a fork per array: slow
/// under the sanitizers, so not for every combination).
template <class T>
void check_phases(batch::executor& ex, batch::scalar_kind kind, batch::batch_op op, std::uint32_t copy_word,
                  bool faults = false) {
  const int segments = 12;
  const std::size_t user_bytes = (segments / user_bases + 1) * window_elements * sizeof(T);
  bases_pair b;
  for (int i = 0; i < user_bases; ++i) {
    std::vector<std::byte>& img = b.host.emplace_back(user_bytes);
    for (std::size_t e = 0; e < user_bytes / sizeof(T); ++e) {
      const T v =
          static_cast<T>((static_cast<int>(e * 37 + static_cast<std::size_t>(i) * 11) % 101) - 50) / static_cast<T>(2);
      std::memcpy(img.data() + e * sizeof(T), &v, sizeof v);
    }
    b.device.at[i] = emulated::allocate<std::byte>(user_bytes);
    emulated::copy_to_device(b.device.at[i], img.data(), user_bytes);
  }
  batch::launch pack_launch{}, unpack_launch{};
  pack_launch.word_bytes = copy_word;
  unpack_launch.word_bytes = sizeof(T);
  unpack_launch.op = op;
  unpack_launch.scalar = kind;
  const auto pack = phase_table<T>(segments, true, pack_launch);
  const auto unpack = phase_table<T>(segments, false, unpack_launch);
  const std::size_t staging_bytes = pack_launch.words * copy_word;
  b.host.emplace_back(staging_bytes, std::byte{0x5a});
  b.device.at[user_bases] = static_cast<std::byte*>(ex.allocate(staging_bytes));
  ex.to_device(b.device.at[user_bases], b.host.back().data(), staging_bytes);
  std::string why;
  CHECK(run_both(ex, b, pack, pack_launch, apply_naive<unsigned char>, why));
  CHECK(run_both(ex, b, unpack, unpack_launch, apply_naive<T>, why));
  CAPTURE(why);
  // Everything emulated is closed again after the launches.
  for (int i = 0; faults && i < user_bases; ++i) CHECK(host_read_faults(b.device.at[i]));
  if (faults) CHECK(host_read_faults(b.device.at[user_bases]) != ex.mpi_reaches_memory());
  for (int i = 0; i < user_bases; ++i) emulated::deallocate(b.device.at[i]);
  ex.deallocate(b.device.at[user_bases], staging_bytes);
}

TEST_CASE("the emulated executor runs copies and combines over several bases like a naive loop",
          "[.device-emulate][emulated][executor]") {
  using hs::memory::mpi_path;
  for (const mpi_path path : {mpi_path::staged, mpi_path::direct}) {
    auto ex = emulated::make_executor(path);
    CAPTURE(ex->mpi_reaches_memory());
    for (const batch::batch_op op :
         {batch::batch_op::copy, batch::batch_op::plus, batch::batch_op::min, batch::batch_op::max}) {
      CAPTURE(static_cast<int>(op));
      check_phases<double>(*ex, batch::scalar_kind::f64, op, 8, op == batch::batch_op::plus);
      check_phases<double>(*ex, batch::scalar_kind::f64, op, 1);
      check_phases<float>(*ex, batch::scalar_kind::f32, op, 4);
      check_phases<std::int64_t>(*ex, batch::scalar_kind::i64, op, 8);
      check_phases<std::int32_t>(*ex, batch::scalar_kind::i32, op, 2);
      check_phases<std::int16_t>(*ex, batch::scalar_kind::i16, op, 2);
      check_phases<std::uint8_t>(*ex, batch::scalar_kind::u8, op, 1);
    }
    // Pinned memory is plain host memory: MPI and the test may touch it.
    void* pinned = ex->allocate_pinned(16);
    std::memset(pinned, 1, 16);
    CHECK_FALSE(host_read_faults(pinned));
    ex->deallocate_pinned(pinned, 16);
  }
}

using space_sweeps::host_memory;

/// Checks a sweep's result on this rank (the runner agrees the verdict across ranks).
void check_sweep(const space_sweeps::result& r) {
  INFO(r.failures);
  CHECK(r.mismatches == 0);
  CHECK(r.configurations > 0);
  CHECK(r.cells > 0);
}

TEST_CASE("field sweeps packed by two host threads match the oracle and one thread", "[.threads][sweep]") {
  hs::plan_options two;
  two.pack_threads = 2;
  check_sweep(space_sweeps::run<host_memory>(MPI_COMM_WORLD, {two}));
}

TEST_CASE("field sweeps in emulated device memory match the oracle and host memory, staged and direct",
          "[.device-emulate][emulated][sweep]") {
  check_sweep(space_sweeps::run<emulated>(MPI_COMM_WORLD, space_sweeps::staged_and_direct()));
}

/// What the executors of `counting_space` were asked to do.
struct executor_calls {
  std::size_t runs = 0, to_host = 0, to_device = 0, pinned = 0;
};
executor_calls calls;

/// The emulated executor, counting its launches and copies.
class counting_executor final : public batch::executor {
 public:
  explicit counting_executor(std::unique_ptr<batch::executor> inner) : inner_(std::move(inner)) {}
  const char* name() const noexcept override { return inner_->name(); }
  bool host_accessible() const noexcept override { return inner_->host_accessible(); }
  bool mpi_reaches_memory() const noexcept override { return inner_->mpi_reaches_memory(); }
  void* allocate(std::size_t bytes) override { return inner_->allocate(bytes); }
  void deallocate(void* p, std::size_t bytes) noexcept override { inner_->deallocate(p, bytes); }
  void* allocate_pinned(std::size_t bytes) override { return ++calls.pinned, inner_->allocate_pinned(bytes); }
  void deallocate_pinned(void* p, std::size_t bytes) noexcept override { inner_->deallocate_pinned(p, bytes); }
  void upload(void* to, const void* from, std::size_t bytes) override { inner_->upload(to, from, bytes); }
  void to_host(void* to, const void* from, std::size_t bytes) override {
    ++calls.to_host;
    inner_->to_host(to, from, bytes);
  }
  void to_device(void* to, const void* from, std::size_t bytes) override {
    ++calls.to_device;
    inner_->to_device(to, from, bytes);
  }
  void run(const batch::segment* table, const batch::launch& l, const batch::bases& b) override {
    ++calls.runs;
    inner_->run(table, l, b);
  }
  void synchronize() override { inner_->synchronize(); }

 private:
  std::unique_ptr<batch::executor> inner_;
};

/// Emulated device memory whose executor counts what it does.
struct counting_space : emulated {
  static std::unique_ptr<batch::executor> make_executor(hs::memory::mpi_path p) {
    return std::make_unique<counting_executor>(emulated::make_executor(p));
  }
};

TEST_CASE("staged exchanges copy through pinned host memory, direct ones hand executor memory to MPI",
          "[.device-emulate][emulated][staging]") {
  using hs::memory::mpi_path;
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  const bool messages = grid.size() > 1;
  struct way {
    std::optional<std::string> gpu_aware;  ///< HALOSHIFT_GPU_AWARE
    mpi_path path;
    bool direct;
  };
  for (const way& w : {way{std::nullopt, mpi_path::detect, false}, way{"1", mpi_path::detect, true},
                       way{"1", mpi_path::staged, false}, way{"0", mpi_path::direct, true}}) {
    const gpu_aware_env env(w.gpu_aware);
    hs::plan_options options;
    options.device_mpi = w.path;
    const hs::field_shape shape(grid.shape(), grid.coords(), {12, 1, 1}, {2, 0, 0});
    hs::field_plan plan = hs::make_field_plan<hs::Shift>(grid, shape, options);
    std::vector<double> start(plan.shape().size(), 1.5);
    double* d = emulated::allocate<double>(start.size());
    emulated::copy_to_device(d, start.data(), start.size() * sizeof(double));
    calls = {};
    plan.forward(hs::make_field_view(counting_space{}, d, plan.shape()));
    plan.reverse(hs::make_field_view(counting_space{}, d, plan.shape()), hs::take_max{});
    CAPTURE(w.gpu_aware.value_or("unset"), static_cast<int>(w.path), calls.runs, calls.to_host, calls.to_device,
            calls.pinned);
    CHECK(calls.runs >= 2);
    const bool staged = !w.direct && messages;
    CHECK((calls.to_host > 0) == staged);
    CHECK((calls.to_device > 0) == staged);
    CHECK((calls.pinned > 0) == staged);
    emulated::deallocate(d);
  }
}

/// Whether a forward, then reverse (take_max), through `plan` of a counting_space view gives the
/// arrays the same exchanges give in host memory.
bool counted_exchange_matches_host(hs::field_plan& plan) {
  std::vector<double> host(plan.shape().size());
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<double>(i % 89) - 0.5;
  double* d = emulated::allocate<double>(host.size());
  emulated::copy_to_device(d, host.data(), host.size() * sizeof(double));
  plan.forward(hs::make_field_view(counting_space{}, d, plan.shape()));
  plan.reverse(hs::make_field_view(counting_space{}, d, plan.shape()), hs::take_max{});
  plan.forward(hs::make_field_view(host.data(), plan.shape()));
  plan.reverse(hs::make_field_view(host.data(), plan.shape()), hs::take_max{});
  std::vector<double> got(host.size());
  emulated::copy_to_host(got.data(), d, got.size() * sizeof(double));
  emulated::deallocate(d);
  return std::memcmp(got.data(), host.data(), got.size() * sizeof(double)) == 0;
}

TEST_CASE("Auto for device fields picks staging with the strategy where the calibration measured the device",
          "[.device-emulate][emulated][staging][auto]") {
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0}, .periodic = {true}});
  const bool messages = grid.size() > 1;
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("haloshift_auto_device_" + std::to_string(::getpid()) + ".json")).string();
  const scoped::env calibration("HALOSHIFT_CALIBRATION", file);  // rank 0's is read
  struct way {
    std::optional<std::string> gpu_aware;  ///< HALOSHIFT_GPU_AWARE
    hs::hockney::device_terms terms;
    bool direct;
    const char* auto_says;  ///< in Auto's log line ("": no staging there)
  };
  const hs::hockney::device_terms dear_copies{1e-6, 1e-10, 1e-2, 1e-9};
  for (const way& w : {way{"1", dear_copies, true, "messages direct (model: direct"},
                       way{std::nullopt, dear_copies, false, "messages staged ("},
                       way{"1", {}, true, ""}}) {  // no device terms: the executor decides, as without Auto
    const gpu_aware_env env(w.gpu_aware);
    hs::calibration c;
    c.cost = hs::hockney(1e-6, 1e-9).with_device(w.terms);
    if (grid.rank() == 0) hs::save_calibration(c, file);
    hs::detail::forget_agreed_models();
    std::vector<std::string> lines;
    auto previous = hs::set_log_sink([&](hs::log_level, std::string_view text) { lines.emplace_back(text); });
    const bool was_verbose = hs::detail::verbose();
    hs::set_verbose(true);
    const hs::field_shape shape(grid.shape(), grid.coords(), {12, 1, 1}, {2, 0, 0});
    hs::field_plan plan = hs::make_field_plan<hs::Auto, counting_space>(grid, shape);
    calls = {};
    CHECK(counted_exchange_matches_host(plan));
    hs::set_verbose(was_verbose);
    hs::set_log_sink(std::move(previous));
    CAPTURE(w.gpu_aware.value_or("unset"), w.auto_says, calls.to_host, lines);
    CHECK((calls.to_host > 0) == (!w.direct && messages));
    if (grid.rank() != 0) continue;
    const auto chose = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.starts_with("Auto chose"); });
    REQUIRE(chose != lines.end());
    const bool says = chose->find(*w.auto_says ? w.auto_says : "messages") != std::string::npos;
    CHECK(says == (*w.auto_says != 0));
  }
  hs::detail::forget_agreed_models();
  if (grid.rank() == 0) std::filesystem::remove(file);
}

/// A stream-ordered forward, then reverse (take_max), of a view of `shape` on an emulated stream
/// whose interior is written by a "kernel" already on the stream; the arrays after synchronising
/// it, against the same exchanges on host memory.
std::string stream_ordered(hs::field_plan& plan, bool poll) {
  const hs::field_shape& sh = plan.shape();
  std::vector<double> host(sh.size(), -7.5);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<double>(i % 97) + 0.25;
  std::vector<double> interior = host;  // what the kernel writes: every cell (ghosts stay for reverse)
  double* d = emulated::allocate<double>(host.size());
  std::vector<double> stale(host.size(), -1.0);
  emulated::copy_to_device(d, stale.data(), stale.size() * sizeof(double));
  emulated::queue q;
  const emulated on{&q};
  const auto v = hs::make_field_view(on, d, sh);
  q.enqueue([&] { std::memcpy(d, interior.data(), interior.size() * sizeof(double)); });
  auto finish = [&](auto& pending) {
    if (poll)
      while (!pending.test()) {
      }
    else
      pending.wait();
    q.synchronize();  // wait() leaves the unpacking on the stream
  };
  {
    auto pending = plan.start_forward(v);
    finish(pending);
  }
  {
    auto pending = plan.start_reverse(v, hs::take_max{});
    finish(pending);
  }
  plan.forward(hs::make_field_view(host.data(), sh));
  plan.reverse(hs::make_field_view(host.data(), sh), hs::take_max{});
  std::vector<double> got(host.size());
  emulated::copy_to_host(got.data(), d, got.size() * sizeof(double));
  emulated::deallocate(d);
  std::string why;
  if (q.done() != q.enqueued()) why += "work left on the stream; ";
  if (std::memcmp(got.data(), host.data(), got.size() * sizeof(double)) != 0)
    why += "the stream-ordered exchange differs from host memory; ";
  return why;
}

TEST_CASE("stream-ordered exchanges in emulation: packing runs after the work already on the stream",
          "[.device-emulate][emulated][stream]") {
  const hs::cartesian_grid grid(MPI_COMM_WORLD, {.dims = {0, 0}, .periodic = {true, false}});
  for (const char* strategy : {"Shift", "SingleHop", "TtlMultiHop", "NeighborAlltoall"})
    for (const hs::memory::mpi_path path : {hs::memory::mpi_path::staged, hs::memory::mpi_path::direct})
      for (const bool poll : {false, true}) {
        CAPTURE(strategy, static_cast<int>(path), poll);
        hs::plan_options options;
        options.device_mpi = path;
        const hs::field_shape shape(grid.shape(), grid.coords(), {9, 7, 1}, {2, 1, 0}, {1, 2, 0});
        hs::field_plan plan = hs::make_field_plan(grid, strategy, shape, options);
        CHECK(stream_ordered(plan, poll) == "");
      }
}

}  // namespace
