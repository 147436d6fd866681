#include "harness/io/job_files.hpp"

#include <fmt/format.h>

#include <map>
#include <sstream>
#include <stdexcept>

namespace lobench::io {
namespace {

// By command name: the order of `lobench schema`'s sections and of messages does not depend on the order
// in which static initialisation happened to register the jobs.
std::map<std::string, JobFiles>& registry() {
  static std::map<std::string, JobFiles> jobs;
  return jobs;
}

// `text` as lines of at most 110 characters (SCHEMA.md's width), broken at spaces.
std::string wrapped(const std::string& text) {
  std::string out, line, word;
  std::istringstream words(text);
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > 110) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line + "\n";
}

std::string table_markdown(const JobTable& t) {
  if (!t.spec.columns)  // a 2-D table of counts (the gradient histograms)
    return fmt::format("\n### `/{}`: {}\n\nint64 [rows, {}]: a row of counts, one per bin.\n", t.spec.name,
                       t.what, t.spec.width);
  return fmt::format("\n### `/{}`: {}\n\n| column | type | unit | meaning |\n|---|---|---|---|\n{}", t.spec.name,
                     t.what, column_markdown_rows(*t.spec.columns));
}

std::string record_markdown(const JobRecord& r) {
  std::string prefixes;
  for (const auto& p : r.prefixes) prefixes += fmt::format("{}`{}NAME`", prefixes.empty() ? "" : ", ", p);
  return fmt::format("\n### `/{}` attributes {}: {}\n\n| column | type | unit | meaning |\n|---|---|---|---|\n{}",
                     r.object, prefixes, r.what, column_markdown_rows(*r.columns));
}

}  // namespace

std::string JobFiles::schema() const { return fmt::format("{}, version {}", schema_prefix(), version); }

const JobTable& JobFiles::table(const std::string& name) const {
  for (const JobTable& t : tables)
    if (t.spec.name == name) return t;
  throw std::logic_error(fmt::format("{} declares no table /{}", command, name));
}

void register_job_files(const JobFiles& files) {
  if (!registry().emplace(files.command, files).second)
    throw std::logic_error(fmt::format("two training jobs are registered as '{}'", files.command));
}

std::vector<const JobFiles*> registered_job_files() {
  std::vector<const JobFiles*> out;
  for (const auto& [name, files] : registry()) out.push_back(&files);
  return out;
}

const JobFiles* job_files_of_schema(const std::string& schema) {
  for (const auto& [name, files] : registry()) {
    const std::string prefix = files.schema_prefix();
    // "lobench train-xmc run, version 1": the prefix, then the version (not "lobench train-xmc runner").
    if (schema.rfind(prefix, 0) == 0 && (schema.size() == prefix.size() || schema[prefix.size()] == ','))
      return &files;
  }
  return nullptr;
}

std::string registered_job_names() {
  std::string out;
  for (const auto& [name, files] : registry()) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

std::string job_files_markdown(const JobFiles& f) {
  std::string md = fmt::format("\n## `lobench {}` run files (`schema` = `{}`)\n\n{}", f.command, f.schema(),
                               wrapped(f.about));
  for (const JobTable& t : f.tables) md += table_markdown(t);
  for (const JobRecord& r : f.records) md += record_markdown(r);
  return md;
}

}  // namespace lobench::io
