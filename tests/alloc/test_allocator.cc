// The caching-allocator rules one at a time, on small hand-made sequences.
#include <string>

#include "alloc/allocator.h"
#include "catch.h"

using namespace racelab::alloc;

namespace {

constexpr std::uint64_t MiB = kMiB;

std::int64_t cur(const StatArray& a) { return a[kAggregate].current; }

}  // namespace

TEST_CASE("allocator: small requests share a 2 MiB segment, large ones a 20 MiB one",
          "[allocator]") {
  CachingAllocator m{Config{}};
  Block* a = m.malloc(1000, 0).block;
  Block* b = m.malloc(1000, 0).block;
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->size == 1024);
  CHECK(b->ptr == a->ptr + 1024);  // split from the same small segment
  CHECK(cur(m.stats().reserved_bytes) == static_cast<std::int64_t>(2 * MiB));
  Block* c = m.malloc(5 * MiB, 0).block;  // 1-10 MiB: a 20 MiB segment, split
  CHECK(cur(m.stats().reserved_bytes) == static_cast<std::int64_t>(22 * MiB));
  Block* d = m.malloc(5 * MiB, 0).block;  // the remaining 15 MiB serves it
  CHECK(d->ptr == c->ptr + 5 * MiB);
  CHECK(m.stats().num_device_alloc == 2);
  Block* e = m.malloc(15 * MiB, 0).block;  // >= 10 MiB: its own segment, rounded to 2 MiB,
  CHECK(e->size == 16 * MiB);              // not split: only 1 MiB would remain
  CHECK(cur(m.stats().reserved_bytes) == static_cast<std::int64_t>(22 * MiB + 16 * MiB));
  CHECK(m.segment_events().size() == 3);
}

TEST_CASE("allocator: frees merge neighbours and track inactive split bytes", "[allocator]") {
  CachingAllocator m{Config{}};
  Block* a = m.malloc(4 * MiB, 0).block;
  Block* b = m.malloc(4 * MiB, 0).block;
  const std::uint64_t base = a->ptr;
  CHECK(cur(m.stats().inactive_split_bytes) == static_cast<std::int64_t>(12 * MiB));
  m.free(a);
  CHECK(cur(m.stats().inactive_split_bytes) == static_cast<std::int64_t>(16 * MiB));
  CHECK(m.largest_free_block() == 12 * MiB);
  m.free(b);  // merges with both neighbours: one unsplit 20 MiB block again
  CHECK(cur(m.stats().inactive_split_bytes) == 0);
  CHECK(m.largest_free_block() == 20 * MiB);
  Block* c = m.malloc(18 * MiB, 0).block;  // fits the merged block at its start
  CHECK(c->ptr == base);
  CHECK(m.stats().num_device_alloc == 1);
}

TEST_CASE("allocator: best fit takes the smallest block that fits, then the lowest address",
          "[allocator]") {
  CachingAllocator m{Config{}};
  Block* big = m.malloc(30 * MiB, 0).block;
  Block* small = m.malloc(12 * MiB, 0).block;
  Block* other = m.malloc(12 * MiB, 0).block;
  m.free(big);
  m.free(other);
  m.free(small);
  Block* x = m.malloc(11 * MiB, 0).block;  // 12 MiB blocks beat the 30 MiB one; lowest address wins
  CHECK(x->ptr == std::min(small->ptr, other->ptr));
}

TEST_CASE("allocator: large blocks split only when more than 1 MiB remains", "[allocator]") {
  CachingAllocator m{Config{}};
  Block* a = m.malloc(12 * MiB, 0).block;
  m.free(a);
  Block* b = m.malloc(11 * MiB + 512, 0).block;  // remainder < 1 MiB: the whole block
  CHECK(b->size == 12 * MiB);
  m.free(b);
  Block* c = m.malloc(10 * MiB, 0).block;  // remainder 2 MiB: split
  CHECK(c->size == 10 * MiB);
}

TEST_CASE("allocator: max_split_size keeps oversize blocks whole and out of small requests",
          "[allocator]") {
  CachingAllocator m{parse_config("max_split_size_mb:64")};
  Block* a = m.malloc(100 * MiB, 0).block;
  m.free(a);
  // A request below max_split_size never takes an oversize block.
  Block* b = m.malloc(30 * MiB, 0).block;
  CHECK(b->ptr != a->ptr);
  CHECK(m.stats().num_device_alloc == 2);
  // An oversize request takes an oversize block only within 20 MiB of its size.
  Block* c = m.malloc(70 * MiB, 0).block;
  CHECK(c->ptr != a->ptr);
  Block* d = m.malloc(90 * MiB, 0).block;
  CHECK(d->ptr == a->ptr);
  CHECK(d->size == 100 * MiB);  // not split
  CHECK(m.stats().oversize_allocations.current == 2);
}

TEST_CASE("allocator: out of memory frees the cache, retries, then reports like PyTorch",
          "[allocator]") {
  Config c;
  c.device_total = 200 * MiB;
  c.device_other = 0;
  CachingAllocator m{c};
  Block* a = m.malloc(120 * MiB, 0).block;
  m.free(a);
  // 150 MiB does not fit beside the cached 120 MiB: the cache is released and the retry succeeds.
  Block* b = m.malloc(150 * MiB, 0).block;
  REQUIRE(b);
  CHECK(m.stats().num_alloc_retries == 1);
  CHECK(m.stats().num_device_free == 1);
  auto r = m.malloc(100 * MiB, 0);
  CHECK(r.block == nullptr);
  CHECK(m.stats().num_ooms == 1);
  CHECK(
      r.oom_message ==
      "CUDA out of memory. Tried to allocate 100.00 MiB. GPU 0 has a total capacity of 200.00 MiB "
      "of "
      "which 50.00 MiB is free. Of the allocated memory 150.00 MiB is allocated by PyTorch, and 0 "
      "bytes "
      "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
      "setting "
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
      "for "
      "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
  CHECK(m.segment_events().back().action == Action::kOom);
}

TEST_CASE("allocator: a memory fraction caps reserved memory and names it in the message",
          "[allocator]") {
  Config c;
  c.device_total = 1000 * MiB;
  c.device_other = 0;
  c.memory_fraction = 0.1;
  CachingAllocator m{c};
  auto r = m.malloc(120 * MiB, 0);
  CHECK(r.block == nullptr);
  CHECK(r.oom_message.find("100.00 MiB allowed; ") != std::string::npos);
}

TEST_CASE("allocator: garbage collection frees old cached blocks once over the threshold",
          "[allocator]") {
  Config c = parse_config("garbage_collection_threshold:0.2");
  c.device_total = 100 * MiB;
  c.device_other = 0;
  c.memory_fraction = 1.0;
  CachingAllocator m{c};
  Block* a = m.malloc(30 * MiB, 0).block;
  const std::uint64_t a_ptr = a->ptr;
  m.free(a);
  Block* b = m.malloc(25 * MiB, 0).block;  // reuses the cached 30 MiB block
  CHECK(b->ptr == a_ptr);
  m.free(b);
  // 40 MiB does not fit the cache; 30 MiB reserved is over 20% of 100 MiB: GC releases the idle
  // 30 MiB block (its age is the average age) before asking the device.
  Block* d = m.malloc(40 * MiB, 0).block;
  REQUIRE(d);
  CHECK(m.stats().num_device_free == 1);
  CHECK(m.stats().num_alloc_retries == 0);
  // Without a memory fraction the threshold does nothing (as in PyTorch).
  Config nofrac = parse_config("garbage_collection_threshold:0.2");
  nofrac.device_total = 100 * MiB;
  nofrac.device_other = 0;
  CachingAllocator n{nofrac};
  n.free(n.malloc(30 * MiB, 0).block);
  REQUIRE(n.malloc(40 * MiB, 0).block);
  CHECK(n.stats().num_device_free == 0);
}

TEST_CASE("allocator: empty_cache releases only unsplit cached segments", "[allocator]") {
  CachingAllocator m{Config{}};
  Block* a = m.malloc(4 * MiB, 0).block;   // splits a 20 MiB segment, stays allocated
  Block* b = m.malloc(30 * MiB, 0).block;  // its own segment
  m.free(b);
  const auto predicted = m.predict_empty_cache();
  REQUIRE(predicted.size() == 1);
  CHECK(predicted[0] == SegmentEvent{Action::kSegmentFree, b->ptr, 30 * MiB});
  m.empty_cache();
  CHECK(m.stats().num_device_free == 1);
  CHECK(cur(m.stats().reserved_bytes) == static_cast<std::int64_t>(20 * MiB));
  m.free(a);
  m.empty_cache();
  CHECK(cur(m.stats().reserved_bytes) == 0);
}

TEST_CASE("allocator: without real addresses, segments go where the H200's driver put them",
          "[allocator]") {
  // A new range of whole 32 MiB units below every earlier one, the segment at its start; later
  // segments take the lowest free remainder that holds them; freed ranges are free again
  // (docs/allocator.md, Conformance: the order decides best fit's ties between equal blocks).
  CachingAllocator m{Config{}};
  Block* a = m.malloc(90 * MiB, 0).block;  // a 96 MiB range, 6 MiB left above the segment
  REQUIRE(a);
  CHECK(a->ptr % (32 * MiB) == 0);
  Block* s = m.malloc(1000, 0).block;  // a 2 MiB small segment, in those 6 MiB
  CHECK(s->ptr == a->ptr + 90 * MiB);
  Block* b = m.malloc(20 * MiB, 0).block;  // a 20 MiB segment: the next 32 MiB range down
  CHECK(b->ptr == a->ptr - 32 * MiB);
  Block* c = m.malloc(54 * MiB, 0).block;  // a 64 MiB range below that, 10 MiB left
  CHECK(c->ptr == b->ptr - 64 * MiB);
  Block* d = m.malloc(12 * MiB, 0).block;  // c's 10 MiB are too few: b's 12 MiB, above c's
  CHECK(d->ptr == b->ptr + 20 * MiB);
  Block* s1 = m.malloc(1 * MiB, 0).block;  // fits the first small segment
  Block* s2 = m.malloc(1 * MiB, 0).block;  // a second one: the lowest remainder, c's
  CHECK(s1->ptr == s->ptr + 1024);
  CHECK(s2->ptr == c->ptr + 54 * MiB);
  m.free(c);
  m.empty_cache();                         // c's range is free again
  Block* e = m.malloc(40 * MiB, 0).block;  // the lowest free range that holds it
  CHECK(e->ptr == c->ptr);
  Block* f = m.malloc(64 * MiB, 0).block;  // none holds it: a new range below
  CHECK(f->ptr == c->ptr - 64 * MiB);
}

TEST_CASE("allocator: best fit's tie between equal blocks follows the driver's placement",
          "[allocator]") {
  // tools/alloc-capture/sequences.py placement: y's segment lies in the rest of x's range, above
  // x's, so the 10 MiB request splits x's segment and the 32 MiB request finds no block (with y's
  // segment below x's it would split y's, x's would merge to 40 MiB and serve the 32 MiB).
  CachingAllocator m{Config{}};
  Block* x = m.malloc(40 * MiB, 0).block;
  Block* y = m.malloc(20 * MiB, 0).block;
  REQUIRE(x);
  REQUIRE(y);
  CHECK(y->ptr == x->ptr + 40 * MiB);
  const std::uint64_t x_segment = x->ptr;
  m.free(x);
  Block* a = m.malloc(20 * MiB, 0).block;
  m.free(y);
  Block* b = m.malloc(10 * MiB, 0).block;
  CHECK(b->ptr == x_segment + 20 * MiB);
  m.free(a);
  Block* c = m.malloc(32 * MiB, 0).block;
  REQUIRE(c);
  CHECK(m.stats().num_device_alloc == 3);
  CHECK(cur(m.stats().reserved_bytes) == static_cast<std::int64_t>(92 * MiB));
}

TEST_CASE("allocator: expandable segments map pages at the end of one segment", "[allocator]") {
  CachingAllocator m{parse_config("expandable_segments:True")};
  Block* a = m.malloc(30 * MiB, 0).block;
  Block* b = m.malloc(30 * MiB, 0).block;
  REQUIRE(a);
  REQUIRE(b);
  CHECK(b->ptr == a->ptr + 30 * MiB);  // one growing segment, no gap
  CHECK(m.mapped_segment_count() == 1);
  CHECK(cur(m.stats().segment) == 0);  // PyTorch counts no 'segment' for expandable memory
  CHECK(cur(m.stats().reserved_bytes) == static_cast<std::int64_t>(60 * MiB));  // 3 pages of 20 MiB
  const auto& ev = m.segment_events();
  REQUIRE(ev.size() == 2);
  CHECK(ev[0] == SegmentEvent{Action::kSegmentMap, a->ptr, 40 * MiB});
  CHECK(ev[1] == SegmentEvent{Action::kSegmentMap, a->ptr + 40 * MiB, 20 * MiB});
  m.free(b);
  m.empty_cache();  // unmaps the whole pages above a's end
  CHECK(m.segment_events().back() ==
        SegmentEvent{Action::kSegmentUnmap, a->ptr + 40 * MiB, 20 * MiB});
  CHECK(cur(m.stats().reserved_bytes) == static_cast<std::int64_t>(40 * MiB));
  m.free(a);
  m.empty_cache();
  CHECK(cur(m.stats().reserved_bytes) == 0);
  CHECK(m.mapped_segment_count() == 0);
}

TEST_CASE("allocator: blocks with pending frees are not reused or merged until completed",
          "[allocator]") {
  CachingAllocator m{Config{}};
  Block* a = m.malloc(4 * MiB, 0).block;
  m.free_request(a);
  CHECK(cur(m.stats().allocated_bytes) == 0);
  CHECK(cur(m.stats().active_bytes) == static_cast<std::int64_t>(4 * MiB));
  Block* b = m.malloc(4 * MiB, 0).block;
  CHECK(b->ptr != a->ptr);
  const std::uint64_t a_ptr = a->ptr;
  m.free_complete(a);
  Block* c = m.malloc(4 * MiB, 0).block;
  CHECK(c->ptr == a_ptr);
}
