#pragma once
// Python pickle values, as far as memory_viz snapshots need them (torch.cuda.memory._dump_snapshot
// writes protocol 4; protocols 2 and 3 are read too). The reader is strict and bounded: every
// length in the file is checked against the bytes that remain before anything is allocated, memo
// references must exist, containers may not contain themselves, nesting is limited, and any
// problem is an InputError "<origin>: byte <offset>: expected <what>, got <what>".
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace racelab::alloc {

enum class PyType { kNone, kBool, kInt, kFloat, kStr, kBytes, kList, kTuple, kDict };

struct PyObject;
using PyRef = std::shared_ptr<PyObject>;

struct PyObject {
  PyType type = PyType::kNone;
  bool b = false;
  std::int64_t i = 0;
  double f = 0;
  std::string s;                              // kStr (UTF-8) and kBytes
  std::vector<PyRef> items;                   // kList, kTuple
  std::vector<std::pair<PyRef, PyRef>> dict;  // kDict, in insertion order

  static PyRef none();
  static PyRef boolean(bool v);
  static PyRef integer(std::int64_t v);
  static PyRef real(double v);
  static PyRef str(std::string v);
  static PyRef list(std::vector<PyRef> v = {});
  static PyRef tuple(std::vector<PyRef> v = {});
  static PyRef new_dict();

  // Dict access by string key: nullptr when absent (or when this is not a dict).
  const PyObject* get(std::string_view key) const;
  PyObject* get(std::string_view key);
  void set(std::string_view key, PyRef value);  // replaces or appends

  bool is_int() const { return type == PyType::kInt; }
  bool is_str() const { return type == PyType::kStr; }
  bool is_list() const { return type == PyType::kList || type == PyType::kTuple; }
  bool is_dict() const { return type == PyType::kDict; }
};

// Python's name for a type ("int", "str", "dict", ...), used in messages.
const char* type_name(PyType t);

// Parses a pickle. `origin` names the file in messages.
PyRef read_pickle(std::string_view data, const std::string& origin);

// Writes protocol 4 (what PyTorch writes), strings memoised, containers batched like CPython.
std::string write_pickle(const PyObject& root);

// JSON equivalent: dicts become objects (keys must be str), lists and tuples arrays, bytes are
// rejected. from_json turns arrays into lists except under the key "segment_pool_id", which
// PyTorch writes as a tuple.
nlohmann::ordered_json to_json(const PyObject& value, const std::string& origin);
PyRef from_json(const nlohmann::ordered_json& value, const std::string& origin);

}  // namespace racelab::alloc
