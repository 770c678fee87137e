// SPDX-License-Identifier: BSD-3-Clause
// The cost model against the papers' own numbers.
//  * shift-hockney-model.txt, Tables 2-6: predicted latency of the 1D Shift,
//    rendezvous (MPI_Ssend), k = 1..10, from Table 1 (alpha = 2,122 ns and the
//    measured time per message size): within 0.1 %; from Table 1's rounded
//    beta column: within 0.5 %.
//  * petri-net-maxplus-shift.txt, Tables 1-3: the (max,+) prediction of the
//    same 1D rendezvous Shift on 64 nodes from its Table 4 latencies: exactly.

#include "../support/catch.hpp"
#include <haloshift/auto.hpp>
#include <haloshift/model/simulation/simulator.hpp>

#include <cmath>
#include <map>

namespace hs = haloshift;

namespace {

constexpr double ns = 1e-9;

/// Shift along one periodic dimension of `nodes` ranks, k steps, rendezvous, one message size.
double predict_1d_shift(int nodes, int k, double message_seconds) {
  const hs::grid_shape g({nodes}, {true});
  const hs::range r = hs::make_range(g, k);
  hs::detail::simulation_setup setup;
  setup.mode = hs::protocol::rendezvous;
  setup.block_bytes = [](int) { return 1.0; };  // one unit per block: phase x sends single blocks
  setup.cost = hs::hockney(message_seconds, 0.0);
  return hs::detail::simulate(g, hs::Shift::make_schedule(g, r), setup).makespan;
}

struct shift_table {
  double load;                 // bytes
  std::vector<double> predicted;  // ns, k = 1..10
};

// Shift paper, Tables 2-6, "predicted latency [ns]".
const std::vector<shift_table> shift_paper = {
    {10, {8937, 17873, 26810, 35746, 44683, 53619, 62556, 71492, 80429, 89366}},
    {100, {10745, 21489, 32234, 42978, 53723, 64467, 75212, 85956, 96701, 107446}},
    {1000, {11526, 23051, 34577, 46103, 57628, 69154, 80679, 92205, 103731, 115256}},
    {10000, {19233, 38465, 57698, 76931, 96163, 115396, 134629, 153861, 173094, 192327}},
    {100000, {60219, 120438, 180657, 240877, 301096, 361315, 421534, 481753, 541972, 602192}},
};
// Shift paper, Table 1: load -> (latency ns, beta ns/byte); alpha is the latency at 0 bytes.
const std::map<double, std::pair<double, double>> shift_table1 = {
    {0, {2122, 0}},          {10, {2234, 11.246}},     {100, {2686, 5.645}},
    {1000, {2881, 0.760}},   {10000, {4808, 0.269}},   {100000, {15055, 0.129}},
};

}  // namespace

TEST_CASE("Shift paper Tables 2-6 from Table 1's measured message times, within 0.1 %", "[model][paper]") {
  for (const auto& table : shift_paper)
    for (int k = 1; k <= 10; ++k) {
      const double t = shift_table1.at(table.load).first * ns;
      const double predicted = predict_1d_shift(64, k, t);
      INFO("load " << table.load << " k " << k << ": " << predicted / ns << " ns, paper " << table.predicted[k - 1]);
      CHECK(std::abs(predicted / ns - table.predicted[k - 1]) <= 0.001 * table.predicted[k - 1]);
    }
}

TEST_CASE("Shift paper Tables 2-6 from alpha and Table 1's rounded beta, within 0.5 %", "[model][paper]") {
  const double alpha = shift_table1.at(0).first * ns;
  for (const auto& table : shift_paper)
    for (int k = 1; k <= 10; ++k) {
      const hs::hockney h(alpha, shift_table1.at(table.load).second * ns);
      const double predicted = predict_1d_shift(64, k, h.time(table.load));
      INFO("load " << table.load << " k " << k << ": " << predicted / ns << " ns, paper " << table.predicted[k - 1]);
      CHECK(std::abs(predicted / ns - table.predicted[k - 1]) <= 0.005 * table.predicted[k - 1]);
    }
}

TEST_CASE("Petri-net paper Tables 1-3: the max-plus prediction from Table 4, exactly", "[model][paper]") {
  // Table 4: average message passing time by load (ns).
  const std::vector<std::pair<double, double>> table4 = {
      {0, 2138},    {5, 2137},       {10, 2304},      {50, 2843},      {100, 2864},     {250, 2890},
      {260, 3018},  {500, 2937},     {1000, 3046},    {5000, 4002},    {10000, 4925},   {50000, 10883},
      {100000, 14943}, {250000, 27267}, {260000, 28489}, {500000, 47305}};
  std::vector<std::pair<double, double>> seconds;
  for (auto [m, t] : table4) seconds.emplace_back(m, t * ns);
  const hs::hockney measured = hs::hockney::from_table(seconds);
  // Tables 1-3, "predicted MPA [ns]", k = 1..10.
  const std::map<double, std::vector<double>> mpa = {
      {10, {9216, 18432, 27648, 36864, 46080, 55296, 64512, 73728, 82944, 92160}},
      {1000, {12184, 24368, 36552, 48736, 60920, 73104, 85288, 97472, 109656, 121840}},
      {100000, {59772, 119544, 179316, 239088, 298860, 358632, 418404, 478176, 537948, 597720}},
  };
  for (const auto& [load, predicted] : mpa)
    for (int k = 1; k <= 10; ++k) {
      const hs::grid_shape g({64}, {true});
      const hs::range r = hs::make_range(g, k);
      hs::detail::simulation_setup setup;
      setup.mode = hs::protocol::rendezvous;
      setup.block_bytes = [load = load](int) { return load; };
      setup.cost = measured;
      const double got = hs::detail::simulate(g, hs::Shift::make_schedule(g, r), setup).makespan / ns;
      INFO("load " << load << " k " << k);
      CHECK(std::round(got) == predicted[k - 1]);
    }
}
