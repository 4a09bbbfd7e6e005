// Versioned documents (document.h).
#include "util/document.h"

#include <fmt/format.h>

#include <cstdint>

#include "racelab/version.h"
#include "util/errors.h"

namespace racelab {

using nlohmann::json;

namespace {

template <class Json>
std::string format_first(const Json& doc, int indent) {
  if (!doc.is_object()) return doc.dump(indent) + "\n";
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const char* key : {"format", "version"}) {
    if (doc.contains(key)) out[key] = nlohmann::ordered_json(doc[key]);
  }
  for (const auto& [key, value] : doc.items()) {
    if (key != "format" && key != "version") out[key] = nlohmann::ordered_json(value);
  }
  return out.dump(indent) + "\n";
}

}  // namespace

std::string document_text(const json& doc, int indent) { return format_first(doc, indent); }
std::string document_text(const nlohmann::ordered_json& doc, int indent) {
  return format_first(doc, indent);
}

void check_format(const json& doc, const std::string& path, const char* format, int version,
                  const std::string& what) {
  if (!doc.is_object()) return;
  const auto f = doc.find("format");
  if (f != doc.end() && !(f->is_string() && f->get<std::string>() == format)) {
    throw InputError(fmt::format("{}: this is a {} file, not {} (\"format\": \"{}\")", path,
                                 f->dump(), what, format));
  }
  const auto v = doc.find("version");
  if (v == doc.end()) return;
  if (!v->is_number_integer() || v->get<std::int64_t>() < 1) {
    throw InputError(
        fmt::format("{}: \"version\" is {}, expected a positive integer", path, v->dump()));
  }
  if (v->get<std::int64_t>() > version) {
    const auto by = doc.find("racelab_version");
    const std::string writer =
        by != doc.end() && by->is_string() ? by->get<std::string>() : std::string();
    throw InputError(fmt::format(
        "{}: {} version {}{} is newer than racelab {} reads (up to version {}); use {}", path,
        format, v->dump(), writer.empty() ? "" : fmt::format(" (written by racelab {})", writer),
        kVersion, version,
        writer.empty() ? std::string("a newer racelab") : "racelab " + writer + " or newer"));
  }
}

}  // namespace racelab
