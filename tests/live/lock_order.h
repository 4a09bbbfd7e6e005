#pragma once
// A live subject the live tests share: two threads take two mutexes, in opposite orders (a
// lock-order deadlock) unless `fixed`.
#include <mutex>
#include <string>

#include "live/live.h"

namespace racelab::live_test {

class LockOrder : public live::Subject {
 public:
  explicit LockOrder(bool fixed) : fixed_(fixed) {}
  std::string name() const override { return fixed_ ? "lock-order-fixed" : "lock-order"; }
  std::string content_hash() const override { return "1"; }
  void setup(live::Runtime& rt) override {
    auto& a = rt.mutex("a");
    auto& b = rt.mutex("b");
    rt.spawn("t0", [&a, &b] {
      std::lock_guard ga(a);
      std::lock_guard gb(b);
    });
    rt.spawn("t1", [&a, &b, this] {
      if (fixed_) {
        std::lock_guard ga(a);
        std::lock_guard gb(b);
      } else {
        std::lock_guard gb(b);
        std::lock_guard ga(a);
      }
    });
  }

 private:
  bool fixed_;
};

}  // namespace racelab::live_test
