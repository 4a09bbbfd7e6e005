// The memory_viz pickle reader and writer: round trips, PyTorch's structure, and hostile input.
#include <cstdint>
#include <string>

#include "alloc/pickle.h"
#include "alloc/replay.h"
#include "alloc/snapshot.h"
#include "alloc_data.h"
#include "catch.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/rng.h"

using namespace racelab;
using namespace racelab::alloc;
using racelab::alloc::testing::fixtures_dir;
using racelab::alloc::testing::same_value;

namespace {

PickleRef sample_value() {
  auto d = PickleValue::new_dict();
  d->set("none", PickleValue::none());
  d->set("t", PickleValue::boolean(true));
  d->set("f", PickleValue::boolean(false));
  auto ints = PickleValue::list();
  for (std::int64_t v :
       {std::int64_t{0}, std::int64_t{255}, std::int64_t{256}, std::int64_t{65535},
        std::int64_t{65536}, std::int64_t{-1}, std::int64_t{INT32_MIN}, std::int64_t{INT32_MAX},
        std::int64_t{INT32_MAX} + 1, std::int64_t{139765148024832}, INT64_MAX, INT64_MIN}) {
    ints->items.push_back(PickleValue::integer(v));
  }
  d->set("ints", ints);
  d->set("float", PickleValue::real(0.6));
  d->set("unicode", PickleValue::str("größe \xe2\x86\x92 ok"));
  d->set("long", PickleValue::str(std::string(300, 'x')));
  d->set("tuple2", PickleValue::tuple({PickleValue::integer(0), PickleValue::integer(0)}));
  d->set("tuple5", PickleValue::tuple({PickleValue::integer(1), PickleValue::integer(2),
                                       PickleValue::integer(3), PickleValue::integer(4),
                                       PickleValue::integer(5)}));
  d->set("empty_tuple", PickleValue::tuple());
  auto big = PickleValue::list();
  for (int k = 0; k < 2500; ++k)
    big->items.push_back(PickleValue::str(k % 2 ? "alloc" : "free_completed"));
  d->set("big_list", big);
  return d;
}

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_input_error(const std::string& data, const std::string& needle) {
  try {
    read_pickle(data, "test.pickle");
    FAIL("expected an InputError for: " << needle);
  } catch (const InputError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("test.pickle: byte ") == 0);
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("pickle: written values read back identically", "[pickle]") {
  const PickleRef v = sample_value();
  const std::string bytes = write_pickle(*v);
  CHECK(bytes.substr(0, 2) == std::string("\x80\x04", 2));
  const PickleRef back = read_pickle(bytes, "roundtrip");
  CHECK(same_value(*v, *back));
  // Writing is deterministic: the same value gives the same bytes.
  CHECK(write_pickle(*back) == bytes);
}

TEST_CASE("pickle: a fixture written by racelab reads back identically", "[pickle]") {
  const auto path = fixtures_dir() / "snap_sdpa_fused_1.pickle";
  const PickleRef original = read_pickle(read_file(path), path.string());
  const PickleRef again = read_pickle(write_pickle(*original), "rewritten");
  CHECK(same_value(*original, *again));
  // And through JSON: tuples come back as tuples where PyTorch writes them.
  const PickleRef via_json = from_json(to_json(*original, "x"), "x");
  CHECK(same_value(*original, *via_json));
}

TEST_CASE("pickle: racelab's snapshots have the keys and types PyTorch writes", "[pickle]") {
  const auto path = fixtures_dir() / "snap_sdpa_chunked_1.pickle";
  const Snapshot real = read_snapshot(path, SnapshotReader::kTree);  // keeps the events' values
  ReplayOptions opt;
  opt.config = config_from_snapshot(real.root->get("allocator_settings"), path.string());
  opt.keep_trace = true;
  const ReplayResult r = replay_trace(real.traces[0], opt);
  const PickleRef ours = model_snapshot_value(real, r);

  // Same keys in the same order with the same types, at every level memory_viz reads.
  auto shape_equal = [](const PickleValue& a, const PickleValue& b) {
    REQUIRE(a.is_dict());
    REQUIRE(b.is_dict());
    REQUIRE(a.dict.size() == b.dict.size());
    for (std::size_t k = 0; k < a.dict.size(); ++k) {
      CHECK(a.dict[k].first->s == b.dict[k].first->s);
      CHECK(a.dict[k].second->type == b.dict[k].second->type);
    }
  };
  shape_equal(*real.root, *ours);
  const PickleValue& rs = *real.root->get("segments");
  const PickleValue& os = *ours->get("segments");
  REQUIRE(rs.items.size() == os.items.size());
  shape_equal(*rs.items[0], *os.items[0]);
  shape_equal(*rs.items[0]->get("blocks")->items[0], *os.items[0]->get("blocks")->items[0]);
  const PickleValue& rt = *real.root->get("device_traces")->items[0];
  const PickleValue& ot = *ours->get("device_traces")->items[0];
  REQUIRE(rt.items.size() == ot.items.size());
  shape_equal(*rt.items[0], *ot.items[0]);
  // The model's final state is the real final state, block for block.
  CHECK(same_value(rs, os));
}

TEST_CASE("pickle: every truncation is one clear error with the byte offset", "[pickle]") {
  const std::string bytes = write_pickle(*sample_value());
  for (std::size_t n = 0; n < bytes.size(); n += (n < 200 ? 1 : 97)) {
    INFO("truncated to " << n << " bytes");
    CHECK_THROWS_AS(read_pickle(bytes.substr(0, n), "t.pickle"), InputError);
  }
  const auto path = fixtures_dir() / "snap_flex_padded_1.pickle";
  const std::string fixture = read_file(path);
  for (std::size_t n :
       {std::size_t{1}, std::size_t{2}, std::size_t{11}, fixture.size() / 3, fixture.size() - 1}) {
    try {
      read_pickle(fixture.substr(0, n), "f.pickle");
      FAIL("truncated fixture parsed");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("f.pickle: byte ") == 0);
    }
  }
}

TEST_CASE("pickle: hostile lengths, references and structures are rejected", "[pickle]") {
  const std::string proto("\x80\x04", 2);
  // A string length far beyond the file: rejected before anything is allocated.
  expect_input_error(proto + std::string("\x8d\x00\x00\x00\x00\x00\x00\x00\x10", 9), "a length of");
  expect_input_error(proto + std::string("X\xff\xff\xff\x7f", 5), "a length of");
  expect_input_error(proto + std::string("\x95\xff\xff\xff\xff\xff\xff\xff\x7f", 9), "a length of");
  expect_input_error(proto + std::string("\x8b\x00\x00\x00\x40", 5), "a length of");
  // Memo references that do not exist.
  expect_input_error(proto + "h\x05.", "memo index");
  // Objects: racelab reads data, never code.
  expect_input_error(proto + "cos\nsystem\n.", "opcode 0x63");
  // A list that contains itself.
  expect_input_error(proto + std::string("]\x94h\x00"
                                         "a.",
                                         6),
                     "contains itself");
  // Deep nesting.
  std::string deep = proto;
  for (int k = 0; k < 200; ++k) deep += "]";
  for (int k = 0; k < 199; ++k) deep += "a";
  deep += ".";
  expect_input_error(deep, "nesting");
  // Stack discipline.
  expect_input_error(proto + "K\x01K\x02.", "exactly one value");
  expect_input_error(proto + "a.", "value(s) on the stack");
  expect_input_error(proto + "}K\x01s.", "value(s) on the stack");
  expect_input_error(proto + "e.", "MARK");
  expect_input_error(std::string("\x80\x09.", 3), "protocol");
  expect_input_error("", "empty");
  // Integers wider than 64 bits.
  expect_input_error(proto + std::string("\x8a\x09\x01\x01\x01\x01\x01\x01\x01\x01\x01.", 12),
                     "at most 8 bytes");
}

TEST_CASE("pickle: random corruption never crashes the reader", "[pickle]") {
  const std::string bytes = write_pickle(*sample_value());
  Rng rng(42);
  int rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string m = bytes;
    const int flips = 1 + static_cast<int>(rng.next() % 4);
    for (int f = 0; f < flips; ++f) m[rng.next() % m.size()] = static_cast<char>(rng.next() & 0xff);
    try {
      read_pickle(m, "fuzz");
    } catch (const InputError&) {
      ++rejected;
    }
  }
  CHECK(rejected > 0);  // the corruption was noticed at least sometimes
}

TEST_CASE("snapshot: a file that is not a snapshot is a clear error", "[pickle]") {
  CHECK(error_of([] {
          snapshot_from_value(PickleValue::list(), "x.pickle");
        }).find("expected a memory snapshot") != std::string::npos);
  auto d = PickleValue::new_dict();
  d->set("segments", PickleValue::list());
  CHECK(error_of([&] { snapshot_from_value(d, "x.pickle"); }).find("_record_memory_history") !=
        std::string::npos);
  auto bad = PickleValue::new_dict();
  auto ev = PickleValue::new_dict();
  ev->set("action", PickleValue::str("alloc"));
  ev->set("addr", PickleValue::str("0x10"));
  ev->set("size", PickleValue::integer(512));
  bad->set("device_traces", PickleValue::list({PickleValue::list({ev})}));
  CHECK(error_of([&] {
          snapshot_from_value(bad, "x.pickle");
        }).find("device_traces[0][0]: 'addr' must be an int") != std::string::npos);
}

TEST_CASE("pickle: protocol 5's bytearray reads as bytes, out-of-band buffers are refused",
          "[pickle]") {
  // PROTO 5, BYTEARRAY8 (an 8-byte length, then the data), STOP: pickle.dumps(bytearray(b"abc"),
  // protocol=5) without its FRAME.
  const std::string ba(
      "\x80\x05\x96\x03\x00\x00\x00\x00\x00\x00\x00"
      "abc.",
      15);
  const PickleRef v = read_pickle(ba, "ba.pickle");
  REQUIRE(v);
  CHECK(v->type == PickleType::kBytes);
  CHECK(v->s == "abc");
  const std::string oob("\x80\x05\x97.", 4);  // NEXT_BUFFER
  const std::string e = error_of([&] { read_pickle(oob, "oob.pickle"); });
  CHECK(e.find("oob.pickle: byte 2") != std::string::npos);
  CHECK(e.find("out-of-band buffer") != std::string::npos);
}
