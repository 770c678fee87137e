// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// An independent Manhattan Street Network for the tests: sizes by a plain
// search, edges from coordinates written out by hand, distances by a
// queue-based BFS per source. Shares no code with haloshift/network.

#include <cmath>
#include <cstdint>
#include <queue>
#include <vector>

namespace msn_oracle {

/// N_i: the smallest N with N^(n-i) >= K_i; K_{i+1} = ceil(K_i / N_i).
inline std::vector<int> sizes(long long p, int n) {
  std::vector<int> out;
  long long k = p;
  for (int i = 0; i < n; ++i) {
    long long N = 1;
    for (;; ++N) {
      long double power = 1;
      for (int j = 0; j < n - i; ++j) power *= static_cast<long double>(N);
      if (power >= static_cast<long double>(k)) break;
    }
    out.push_back(static_cast<int>(N));
    k = (k + N - 1) / N;
  }
  return out;
}

struct network {
  long long p;
  std::vector<int> n;             // sizes
  std::vector<std::vector<int>> out;  // out[v][i]: successor along dimension i

  network(long long vertices, std::vector<int> dims) : p(vertices), n(std::move(dims)), out(vertices) {
    const int nd = static_cast<int>(n.size());
    for (long long v = 0; v < p; ++v) {
      std::vector<int> c(nd);
      long long r = v;
      for (int i = nd - 1; i >= 0; --i) c[i] = static_cast<int>(r % n[i]), r /= n[i];
      for (int i = 0; i < nd; ++i) {
        int others = 0;
        for (int j = 0; j < nd; ++j)
          if (j != i) others += c[j];
        std::vector<int> t = c;
        for (;;) {  // step along the line, passing over missing positions
          t[i] = others % 2 == 0 ? (t[i] + 1) % n[i] : (t[i] + n[i] - 1) % n[i];
          long long w = 0;
          for (int j = 0; j < nd; ++j) w = w * n[j] + t[j];
          if (w < p) {
            out[v].push_back(static_cast<int>(w));
            break;
          }
        }
      }
    }
  }

  /// Hops from s to every vertex (-1: unreachable).
  std::vector<int> from(int s) const {
    std::vector<int> d(p, -1);
    std::queue<int> q;
    d[s] = 0;
    q.push(s);
    while (!q.empty()) {
      const int u = q.front();
      q.pop();
      for (int w : out[u])
        if (d[w] < 0) d[w] = d[u] + 1, q.push(w);
    }
    return d;
  }

  std::vector<std::vector<int>> reversed() const {
    std::vector<std::vector<int>> in(p);
    for (long long v = 0; v < p; ++v)
      for (int w : out[v]) in[w].push_back(static_cast<int>(v));
    return in;
  }

  /// -1 if some vertex does not reach another.
  int diameter() const {
    int worst = 0;
    for (long long s = 0; s < p; ++s)
      for (int h : from(static_cast<int>(s))) {
        if (h < 0) return -1;
        worst = std::max(worst, h);
      }
    return worst;
  }
};

}  // namespace msn_oracle
