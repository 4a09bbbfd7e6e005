#include "report/check_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "racelab/version.h"
#include "report/check_json.h"
#include "report/schedule_paths.h"
#include "sched/strategies/strategies.h"
#include "util/document.h"
#include "util/files.h"
#include "util/html.h"
#include "util/spawn.h"

namespace racelab::report {

using html::escape;

namespace {

std::string cell(bool good, bool neutral, const std::string& text) {
  return fmt::format("<td class=\"{}\">{}</td>",
                     neutral ? ""
                     : good  ? "pass"
                             : "fail",
                     escape(text));
}

// A variant's arguments wrapped only between them, never inside one (`--late-grow`, not
// `--late-` / `grow`).
std::string unbroken_words(const std::string& text) {
  std::string out;
  std::size_t from = 0;
  while (from < text.size()) {
    const std::size_t space = text.find(' ', from);
    const std::size_t to = space == std::string::npos ? text.size() : space;
    if (to > from) {
      out += (out.empty() ? "" : " ") + std::string("<span class=\"nw\">") +
             escape(std::string_view(text).substr(from, to - from)) + "</span>";
    }
    from = to + 1;
  }
  return out;
}

// The id of a variant's section: its place in the check (names may repeat or hold any character).
std::string variant_id(const results::CheckResult& r, const results::VariantResult& v) {
  return fmt::format("variant-{}", &v - r.variants.data());
}

// Why a variant did not pass, in one line: the exception or finding of the races (with the thread
// that raised it), the native runs' failure, or the uncontrolled run's; empty where the table's
// columns say it all (memory not stable, a proof cut short).
std::string cause(const results::VariantResult& v) {
  auto first_line = [](const std::string& text) { return text.substr(0, text.find('\n')); };
  if (!v.races.message.empty()) return first_line(v.races.message);
  if (v.native.failed != 0 && !v.native.message.empty()) return first_line(v.native.message);
  if (!v.memory.failure.empty())
    return "the uncontrolled run failed, " + v.memory.ended + ": " + first_line(v.memory.failure);
  if (!v.memory.explanation.empty()) return v.memory.explanation.front();
  return "";
}

}  // namespace

std::string check_html(const results::CheckResult& r, const results::CheckOptions& o) {
  using RS = results::RaceVerdict::State;
  using MS = results::MemoryVerdict::State;
  std::string body = fmt::format(
      "<h1>racelab check: {}</h1><div class=\"sub\">{} variant(s); races: a hunt of {} "
      "executions each under the scheduler ({}, seed {}, interposition {}){}; memory: one "
      "uncontrolled run each with the CUDA allocator capture. {} — racelab {}, {:.1f} s</div>",
      escape(o.script), r.variants.size(), o.executions, escape(sched::strategy_name(o.strategy)),
      o.seed, escape(o.interpose),
      o.prove ? fmt::format(", then a dpor proof of at most {} executions", o.proof_executions)
              : std::string(" (sampled: no proof asked for)"),
      r.interrupted        ? "Interrupted: not a verdict"
      : r.exit_code() == 0 ? "Every variant passed"
                           : "Not every variant passed",
      kVersion, r.seconds);
  // An interrupted check: what it finished and what it did not, first.
  if (r.interrupted)
    body += fmt::format("<p class=\"pending\">interrupted: {}. {}.</p>",
                        escape(results::interrupted_line(r)), escape(results::kInterruptedWhy));
  // The torch or Python outside the table's verified range (the same interpreter for every
  // variant: the first variant's line).
  for (const auto& v : r.variants) {
    if (v.races.outside_verified.empty()) continue;
    body += fmt::format("<p class=\"fail\">warning: {}</p>", escape(v.races.outside_verified));
    break;
  }
  // The answer first: one row per variant with its verdict, and under each that did not pass the
  // one-line cause (the exception and the thread that raised it, the native runs' failure, what
  // grew); each variant's evidence is folded below the table until asked for.
  body +=
      "<table class=\"variants\"><tr><th>variant</th><th>verdict</th><th>compile "
      "races</th><th>memory</th></tr>";
  for (const auto& v : r.variants) {
    const results::Outcome outcome = v.verdict().outcome;
    const std::string word = results::outcome_word(outcome);
    body += fmt::format(
        "<tr class=\"verdict\" data-variant=\"{}\" data-verdict=\"{}\"><td><a "
        "href=\"#{}\"><code>{}</code></a></td>",
        escape(v.name), escape(word), escape(variant_id(r, v)), unbroken_words(v.name));
    body +=
        cell(outcome == results::Outcome::kPass, outcome == results::Outcome::kInconclusive, word);
    const bool races_pass = v.races.state == RS::kClean || v.races.state == RS::kProven;
    body += cell(races_pass && v.native.failed == 0, false, results::races_line(v));
    body += cell(v.memory.state == MS::kStable, v.memory.state == MS::kNotMeasured,
                 results::memory_summary(v.memory));
    body += "</tr>";
    const std::string why = cause(v);
    if (!v.passed() && !why.empty())
      body +=
          fmt::format("<tr class=\"cause\"><td></td><td colspan=\"3\">{}</td></tr>", escape(why));
  }
  body += "</table>";
  for (const auto& v : r.variants) {
    const results::Outcome outcome = v.verdict().outcome;
    const std::string word = results::outcome_word(outcome);
    body += fmt::format(
        "<details class=\"variant scenario\" id=\"{}\"><summary><span class=\"{}\">{}</span> "
        "<code>{}</code> · {}</summary>",
        escape(variant_id(r, v)),
        outcome == results::Outcome::kPass           ? "pass"
        : outcome == results::Outcome::kInconclusive ? "pending"
                                                     : "fail",
        escape(word), escape(v.name), escape(results::races_line(v)));
    body += "<h3>Compile races</h3>";
    body +=
        fmt::format("<p class=\"{}\">{}</p>",
                    v.races.state == RS::kClean || v.races.state == RS::kProven ? "pass" : "fail",
                    escape(results::race_summary(v.races)));
    if (!v.races.message.empty()) body += fmt::format("<p>{}</p>", escape(v.races.message));
    if (!v.races.stack.empty()) {
      // The exception's traceback, most recent call last; the script's own frames in bold.
      body += "<pre class=\"stack\">";
      for (const auto& fr : v.races.stack) {
        const std::string line = fmt::format("{}:{} in {}", fr.file, fr.line, fr.function);
        body += fr.user ? "<b>" + escape(line) + "</b>\n" : escape(line) + "\n";
      }
      body += "</pre>";
    }
    if (!v.races.kinds.empty()) {
      std::string kinds;
      for (const auto& [k, n] : v.races.kinds)
        kinds += fmt::format("{}{} in {}", kinds.empty() ? "" : ", ", k, n);
      body += fmt::format("<p class=\"sub\">kinds seen (executions): {}</p>", escape(kinds));
    }
    if (!v.races.schedule.empty())
      body += "<p>Replay this interleaving:</p>" +
              html::copyable(replay_command(v.races.schedule, "live python"));
    if (v.native.failed != 0) {
      body += fmt::format(
          "<p class=\"fail\">{}</p><p>{}</p><p class=\"sub\">Why control did not "
          "reach it: {}. Log: <code>{}</code></p>",
          escape(results::races_line(v)), escape(v.native.message), escape(results::kNativeOnlyWhy),
          escape(v.native.log));
      if (!v.native.stack.empty()) {
        body += "<pre class=\"stack\">";
        for (const auto& fr : v.native.stack)
          body += escape(fmt::format("{}:{} in {}", fr.file, fr.line, fr.function)) + "\n";
        body += "</pre>";
      }
    }
    if (v.races.proof.ran && !v.races.proof.covers.empty())
      body += fmt::format("<p class=\"sub\">{}</p>", escape(v.races.proof.covers));
    body += "<details><summary>the search's command</summary>" +
            html::copyable(shell_line(v.races.argv)) + "</details>";
    if (v.races.proof.ran && v.races.proof.argv != v.races.argv)
      body += "<details><summary>the proof's command</summary>" +
              html::copyable(shell_line(v.races.proof.argv)) + "</details>";
    body += "<h3>Memory</h3>";
    body += fmt::format("<p class=\"{}\">{}</p>",
                        v.memory.state == MS::kStable        ? "pass"
                        : v.memory.state == MS::kNotMeasured ? ""
                                                             : "fail",
                        escape(results::memory_summary(v.memory)));
    if (!v.memory.failure.empty())
      body += fmt::format(
          "<p class=\"fail\">The uncontrolled run failed ({}), so the memory verdict is of a "
          "partial run:</p><pre>{}</pre>",
          escape(v.memory.ended), escape(v.memory.failure));
    for (const auto& d : v.memory.devices) {
      std::vector<std::size_t> growth;
      for (std::size_t k = 0; k < d.labels.size(); ++k)
        if (std::find(d.growth_at.begin(), d.growth_at.end(), d.labels[k]) != d.growth_at.end())
          growth.push_back(k);
      body += html::line_chart(
          "plot", fmt::format("{}: memory at the end of each iteration (MiB)", d.name), d.labels,
          {{"reserved", "s-a", d.reserved_mib}, {"allocated", "s-b", d.allocated_mib}}, "MiB",
          growth, "device allocation during it");
    }
    const std::string rel =
        std::filesystem::path(v.memory.report_dir).lexically_relative(o.out).string();
    if (!v.memory.report_dir.empty())
      body += fmt::format(
          "<p class=\"sub\">Per-iteration tables and segment maps: <a href=\"{0}/report.html\">{0}/"
          "report.html</a> (alloc report)</p>",
          escape(rel.empty() ? v.memory.report_dir : rel));
    if (!v.memory.argv.empty())
      body += "<details><summary>the capture's command</summary>" +
              html::copyable(shell_line(v.memory.argv)) + "</details>";
    body += "</details>";
  }
  return html::page("racelab check", "table.variants tr.verdict", body);
}

void write_check_outputs(const results::CheckResult& r, const results::CheckOptions& o) {
  const std::filesystem::path out(o.out);
  write_file_atomic(out / "check.json", document_text(check_json(r, o)));
  write_file_atomic(out / "check.html", check_html(r, o));
}

}  // namespace racelab::report
