#include "harness/train/frontier_merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "harness/io/partition.hpp"
#include "harness/train/frontier_file.hpp"

namespace lobench::train {

namespace {

struct Part {
  std::string path;
  FrontierHeader header;
  io::Partition partition;
  std::vector<FrontierCellRow> cells;
  std::vector<FrontierLineRow> lines;
};

Part read_part(const std::string& path) {
  Part p;
  p.path = path;
  p.header = FrontierRunFile::read_header(path);
  try {
    p.partition = io::Partition::parse(p.header.partition);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(fmt::format("merge: '{}' records partition '{}', not K/N", path, p.header.partition));
  }
  p.cells = FrontierRunFile::read_cells(path);
  p.lines = FrontierRunFile::read_lines(path);
  return p;
}

// The fp32 baseline's cells by seed: the same in every part, bit for bit (each part trains it itself).
std::map<int64_t, FrontierCellRow> common_baseline(const std::vector<Part>& parts) {
  std::map<int64_t, FrontierCellRow> base;
  for (const Part& p : parts)
    for (const FrontierCellRow& c : p.cells) {
      if (c.line != -1) continue;
      auto [it, fresh] = base.emplace(c.seed, c);
      if (!fresh && std::memcmp(&it->second.metric, &c.metric, sizeof c.metric) != 0)
        throw std::invalid_argument(fmt::format("merge: the fp32 run of seed {} differs between the parts ({} in '{}'); "
                                                "they were not made by the same build and data",
                                                c.seed, c.metric, p.path));
    }
  return base;
}

}  // namespace

bool is_frontier_file(const std::string& path) {
  try {
    FrontierRunFile::read_header(path);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::string merge_frontier_parts(const std::string& out, const std::vector<std::string>& paths, const Provenance& prov,
                                 bool overwrite) {
  std::vector<Part> parts;
  for (const auto& path : paths) parts.push_back(read_part(path));
  std::vector<std::pair<std::string, io::Partition>> named;
  for (const Part& p : parts) {
    if (p.header.identity != parts.front().header.identity)
      throw std::invalid_argument(fmt::format("merge: '{}' is another search than '{}' ({} vs {})", p.path,
                                              parts.front().path, p.header.identity, parts.front().header.identity));
    named.emplace_back(p.path, p.partition);
  }
  const int64_t lines = parts.front().header.lines, N = parts.front().partition.count;
  io::check_partitions(named, std::min(N, lines));
  std::vector<FrontierLineRow> all_lines;
  std::vector<FrontierCellRow> cells;
  for (const auto& [seed, c] : common_baseline(parts)) cells.push_back(c);
  for (const Part& p : parts) {
    for (const FrontierLineRow& l : p.lines) {
      if (l.line % N != p.partition.index)
        throw std::invalid_argument(fmt::format("merge: '{}' (partition {}) holds line {}, which partition {}/{} makes",
                                                p.path, p.header.partition, l.line, l.line % N, N));
      all_lines.push_back(l);
    }
    for (const FrontierCellRow& c : p.cells)
      if (c.line != -1) cells.push_back(c);
  }
  std::sort(all_lines.begin(), all_lines.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
  for (int64_t i = 0; i < lines; ++i)
    if (i >= int64_t(all_lines.size()) || all_lines[size_t(i)].line != i)
      throw std::invalid_argument(fmt::format("merge: line {} of {} is in no part (its partition {}/{} has not finished "
                                              "it: continue that part with --resume)",
                                              i, lines, i % N, N));
  if (int64_t(all_lines.size()) != lines)
    throw std::invalid_argument(fmt::format("merge: the parts hold {} lines, the search has {}", all_lines.size(), lines));
  FrontierHeader h = parts.front().header;
  h.partition = io::Partition{}.str();  // the whole search
  FrontierRunFile file(out, prov, h, overwrite, /*resume=*/false);
  for (const FrontierCellRow& c : cells) file.append_cell(c);
  for (const FrontierLineRow& l : all_lines) file.append_line(l);
  file.set_attr("baseline_mean", all_lines.front().baseline_mean);
  file.set_attr("baseline_std", all_lines.front().baseline_std);
  file.set_attr("tolerance", all_lines.front().tolerance);
  file.set_attr("merged_parts", double(parts.size()));
  file.close();
  return fmt::format("merged {} frontier parts, {} lines, {} training runs -> {}", parts.size(), lines, cells.size(), out);
}

}  // namespace lobench::train
