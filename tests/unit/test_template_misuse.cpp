// SPDX-License-Identifier: BSD-3-Clause
// Misuse of a template is rejected at the user's call, by a concept: a
// positions argument that is not a position layout, a payload type that is
// not trivially copyable, a reduction op that does not combine two elements,
// a strategy argument that is neither a strategy nor Auto. Each assertion asks
// a requires-expression whether the call is well-formed: a rejection deep in
// the library (a hard error inside a function body) would leave the call
// well-formed to the requires-expression, and the static_assert would fail.
// The good calls are asserted too, so a typo cannot make a check pass.

#include "../support/catch.hpp"
#include <haloshift/auto.hpp>

#include <array>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace hs = haloshift;

namespace {

template <class S, class V>
concept particle_plan_takes = requires(const hs::cartesian_grid& g, const hs::domain& d, const V& x) {
  hs::make_particle_plan<S>(g, d, 0.5, x);
};
template <class V>
concept named_particle_plan_takes = requires(const hs::cartesian_grid& g, const hs::domain& d, const V& x) {
  hs::make_particle_plan(g, "Shift", d, 0.5, x);
};
template <class S, class T>
concept block_plan_takes = requires(const hs::cartesian_grid& g) { hs::make_plan<S, T>(g, 1, 4); };
template <class S, class T>
concept one_shot_takes = requires(const hs::cartesian_grid& g, const std::vector<T>& v) { hs::exchange<S>(g, 1, v); };
template <class S>
concept field_plan_takes = requires(const hs::grid_field<double>& f) { hs::make_field_plan<S>(f); };
template <class Op, class T>
concept particle_reverse_takes = requires(hs::particle_plan& p, std::vector<T>& a, Op op) { p.reverse(a, op); };
template <class Op>
concept particle_reverse_of_two_takes = requires(hs::particle_plan& p, std::vector<double>& a,
                                                 std::vector<float>& b, Op op) { p.reverse(a, b, op); };
template <class A, class B>
concept particle_reverse_of_two_without_op_takes = requires(hs::particle_plan& p, A& a, B& b) { p.reverse(a, b); };
template <class Op>
concept block_reverse_takes = requires(hs::plan<double>& p, hs::halo<double>& h, std::span<double> own, Op op) {
  p.reverse(h, own, op);
};
template <class Op>
concept field_reverse_takes = requires(hs::field_plan& p, hs::grid_field<double>& f, Op op) { p.reverse(f, op); };
template <class Op>
concept views_reverse_takes = requires(hs::field_plan& p, const hs::field_view<double>& u,
                                       const hs::field_view<float>& v, Op op) { p.reverse(u, v, op); };

struct not_a_strategy {
  static constexpr std::string_view name = "not_a_strategy";
};
struct not_copyable {
  std::string text;
};
struct sums {
  double operator()(double a, double b) const { return a + b; }
};
struct one_argument {
  double operator()(double a) const { return a; }
};
struct yields_text {
  std::string operator()(double, double) const { return {}; }
};

}  // namespace

// Positions: every layout, for every strategy and Auto; anything else is refused at the call.
static_assert(particle_plan_takes<hs::Shift, std::vector<hs::position>>);
static_assert(particle_plan_takes<hs::Auto, std::vector<hs::position>>);
static_assert(particle_plan_takes<hs::Auto, hs::array_positions<std::array<float, 3>>>);
static_assert(particle_plan_takes<hs::Auto, hs::split_positions<double>>);
static_assert(!particle_plan_takes<hs::Shift, std::vector<int>>);
static_assert(!particle_plan_takes<hs::Auto, std::vector<int>>);
static_assert(!particle_plan_takes<hs::Auto, double>);
static_assert(!named_particle_plan_takes<std::vector<std::string>>);
static_assert(!particle_plan_takes<not_a_strategy, std::vector<hs::position>>);
static_assert(!particle_plan_takes<int, std::vector<hs::position>>);

// Payload types: trivially copyable objects only.
static_assert(block_plan_takes<hs::Shift, double>);
static_assert(block_plan_takes<hs::Auto, double>);
static_assert(!block_plan_takes<hs::Shift, std::string>);
static_assert(!block_plan_takes<hs::Shift, not_copyable>);
static_assert(!block_plan_takes<hs::Auto, std::string>);
static_assert(!block_plan_takes<not_a_strategy, double>);
static_assert(one_shot_takes<hs::SingleHop, int>);
static_assert(one_shot_takes<hs::Auto, int>);
static_assert(!one_shot_takes<hs::SingleHop, std::string>);
static_assert(!one_shot_takes<not_a_strategy, int>);
static_assert(!particle_reverse_takes<std::plus<>, std::string>);

// Strategies of field plans: a strategy or Auto.
static_assert(field_plan_takes<hs::TtlMultiHop>);
static_assert(field_plan_takes<hs::Auto>);
static_assert(!field_plan_takes<not_a_strategy>);
static_assert(!field_plan_takes<double>);

// Reduction ops: op(a, b) giving an element, last in every reverse.
static_assert(particle_reverse_takes<std::plus<>, double>);
static_assert(particle_reverse_takes<sums, double>);
static_assert(!particle_reverse_takes<one_argument, double>);
static_assert(!particle_reverse_takes<yields_text, double>);
static_assert(particle_reverse_of_two_takes<std::plus<>>);
static_assert(!particle_reverse_of_two_takes<one_argument>);
static_assert(particle_reverse_of_two_without_op_takes<std::vector<double>, std::span<float>>);
static_assert(!particle_reverse_of_two_without_op_takes<std::vector<double>, std::vector<std::string>>);
static_assert(block_reverse_takes<hs::take_max>);
static_assert(!block_reverse_takes<yields_text>);
static_assert(field_reverse_takes<hs::take_min>);
static_assert(field_reverse_takes<hs::take_ghost_value>);
static_assert(!field_reverse_takes<one_argument>);
static_assert(views_reverse_takes<hs::take_max>);
static_assert(!views_reverse_takes<yields_text>);

TEST_CASE("misuse of a template is rejected at the call, by a concept (checked at compile time)", "[misuse]") {
  SUCCEED("the static_asserts of this file hold");
}
