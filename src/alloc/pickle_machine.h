#pragma once
// The pickle stack machine behind read_pickle() and the streaming snapshot reader
// (snapshot_stream.cc): the opcodes of a plain-data pickle, strict and bounded as pickle.h
// describes. A subclass may watch containers as they are created and take the items appended to
// a list instead of storing them (the streaming reader turns trace events into TraceEvents there);
// with a MemoLiveness it keeps only the memo entries a later read needs.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "alloc/pickle.h"
#include "alloc/pickle_input.h"
#include "alloc/pickle_memo.h"

namespace racelab::alloc {

class PickleMachine {
 public:
  // `live` (optional) must come from scan_memo() over the same bytes.
  PickleMachine(PickleInput& in, const std::string& origin, const MemoLiveness* live = nullptr);
  virtual ~PickleMachine();
  PickleMachine(const PickleMachine&) = delete;
  PickleMachine& operator=(const PickleMachine&) = delete;

  // Runs to STOP and returns the value it leaves, checked by finished().
  PickleRef run();

  [[noreturn]] void fail(std::uint64_t at, std::string_view expected, std::string_view got) const;

 protected:
  // A new container is on top of the stack.
  virtual void created(const PickleRef& container) { (void)container; }
  // APPEND and APPENDS: stores `items` in `list` unless the subclass takes them.
  virtual void append(PickleValue& list, std::vector<PickleRef>& items, std::uint64_t at);
  // Before any change to a container on the stack (SETITEM(S), APPEND(S)).
  virtual void changing(const PickleValue& container, std::uint64_t at) {
    (void)container;
    (void)at;
  }
  // At STOP: rejects self-containing containers and nesting deeper than kMaxPickleDepth.
  virtual void finished(const PickleRef& root, std::uint64_t at) { check_structure(root, at); }

  // Rejects a cycle below `root`, or nesting deeper than `max_depth` containers (iteratively: a
  // hostile file must not be able to exhaust the C++ stack).
  void check_structure(const PickleRef& root, std::uint64_t at,
                       int max_depth = kMaxPickleDepth) const;

  const std::vector<PickleRef>& stack() const { return stack_; }
  const std::vector<std::size_t>& marks() const { return marks_; }
  const std::string& origin() const { return origin_; }

 private:
  [[noreturn]] void too_long(std::uint64_t at, std::uint64_t n) const;
  std::uint8_t u8(std::string_view what);
  std::uint64_t le(int n, std::string_view what);
  std::uint64_t be8(std::string_view what);
  std::string bytes(std::uint64_t at, std::uint64_t n);
  std::int64_t long_int(std::uint64_t at, std::uint64_t n);
  PickleRef container(PickleRef p);
  void push(PickleRef p) { stack_.push_back(std::move(p)); }
  PickleRef pop();
  PickleValue* top() { return stack_.back().get(); }
  void need_stack(std::uint64_t at, std::size_t n);
  std::vector<PickleRef> pop_mark(std::uint64_t at);
  PickleValue* target(PickleType t, std::uint64_t at, std::string_view op);
  void add_item(PickleValue& dct, const PickleRef& k, const PickleRef& v, std::uint64_t at);
  void memo_put(std::uint64_t key);
  PickleRef memo_get(std::uint64_t at, std::uint64_t key);

  PickleInput& in_;
  const std::string& origin_;
  const MemoLiveness* live_;
  std::vector<PickleRef> stack_;
  std::vector<std::size_t> marks_;
  MemoKeys keys_;
  std::unordered_map<std::uint64_t, PickleRef> memo_;  // with live_: only entries still needed
  std::uint64_t reads_ = 0;                            // memo reads so far
  bool stopped_ = false;
};

}  // namespace racelab::alloc
