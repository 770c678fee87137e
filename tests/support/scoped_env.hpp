// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// An environment variable set (or unset) for a scope, restored after: HALOSHIFT_GPU_AWARE,
// HALOSHIFT_CALIBRATION and the like, read at each decision.

#include <cstdlib>
#include <optional>
#include <string>

namespace scoped {

/// Sets `name` to `value` for a scope (unset for nullopt), restoring what was there.
class env {
 public:
  env(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    set(value);
  }
  env(const env&) = delete;
  env& operator=(const env&) = delete;
  ~env() { set(old_); }

 private:
  void set(const std::optional<std::string>& v) const {
    if (v)
      ::setenv(name_, v->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace scoped
