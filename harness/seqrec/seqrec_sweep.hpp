// What `lobench train-seqrec` does, callable from tests: the model, loss variant, dataset, L, N, B, D,
// layers, heads, steps, epochs and seed are axes of the one sweep grammar (harness/sweep/axes.hpp:
// comma lists, the last occurrence of a repeated option wins, the runs are the Cartesian product).
// As `lobench train-xmc`: one HDF5 run file per point (harness/seqrec/seqrec_run_file.hpp), in
// --out-dir, named by the dataset, the variant, the seed and the swept values; a single point may
// instead name its file with --out. Points predicted to exceed --mem-limit are recorded as skipped
// with their predicted bytes; --dry-run records every point's prediction and trains nothing.
//
// Every point is validated (configuration, variant, model shape, memory prediction) and every output
// path checked before anything is written, so a refused sweep exits with its message and leaves every
// file as it was. An existing run file is refused unless `overwrite`.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "harness/provenance.hpp"
#include "harness/seqrec/gradient_exchange.hpp"
#include "harness/seqrec/seqrec_config.hpp"
#include "harness/sweep/axes.hpp"
#include "harness/sweep/partition.hpp"

namespace lobench::seqrec {

// The axes of `lobench train-seqrec`, with SeqrecConfig's defaults, slowest first: dataset, L, N, B,
// D, layers, heads, model (sasrec: tied output table | sasrec_untied), steps, epochs, variant, seed.
sweep::Axes seqrec_axes();

struct SeqrecSweepSpec {
  sweep::Axes axes = seqrec_axes();
  SeqrecConfig base;      // everything that is not an axis (lr, dropout, threads, mem_limit, dry_run, ...)
  std::string out;        // the run file of a single-point sweep
  std::string out_dir;    // the folder of the run files (one per point)
  bool overwrite = false; // replace existing run files instead of refusing
  // Where a public set named by --dataset (beauty, sports, toys, lastfm) is found: the data folder
  // (--data-dir; empty: $LOBENCH_DATA, no other default), its file checked unless verify is false.
  std::string data_dir;
  bool verify = true;
  // Which points this process runs: i % N == K of the sweep (`--partition K/N`, one part of a job array,
  // each part its own --out-dir; `lobench merge` joins the parts' folders).
  sweep::Partition partition;
  // --resume: keep the points whose run files are finished (status ok, skipped or failed, of this sweep:
  // its `sweep` attribute) and run the others (missing, interrupted, a dry run's).
  bool resume = false;
  bool progress_lines = true;  // the driver's line after each point (with the sweep's ETA) on `err`
  // Data-parallel (`mpirun -np R lobench train-seqrec --data-parallel`): this process is one rank of
  // every run (gradient_exchange.hpp); rank 0 alone checks the run files' paths, writes and prints, and a
  // failure one rank alone sees ends every rank (exit status 2). Null: one process.
  GradientExchange* exchange = nullptr;
};

// What makes two train-seqrec processes parts of one sweep: every axis with its values and every fixed
// option that changes what is trained (not --threads, --out-dir, --partition, --mem-limit). Recorded in
// each run file as the attribute `sweep`, beside `sweep_index`, `sweep_runs` and `partition`.
std::string seqrec_sweep_identity(const SeqrecSweepSpec& spec);

struct SeqrecSweepPoint {
  SeqrecConfig config;  // with config.out set to the point's run file
  std::string name;     // file stem: dataset, the swept values, variant, seed
  std::string describe; // "dataset=... L=8 ..." (every axis)
};

// The points in order (the last-declared axis varying fastest), each with its run file path. Throws
// std::invalid_argument for an axis value out of range, for --out with more than one point, or for
// neither / both of --out and --out-dir.
std::vector<SeqrecSweepPoint> expand_seqrec_sweep(const SeqrecSweepSpec& spec);

// Replaces each point's --dataset that names a public set (datasets/public_datasets.hpp: beauty,
// sports, toys, lastfm) with its file under the data folder, verified (size and SHA-256, each file
// once) unless spec.verify is false; an existing file or synthetic:NAME is kept as given. Throws
// std::runtime_error naming the missing or changed file and how to pass --data-dir, or a value that is
// neither a file nor a public set.
void resolve_seqrec_datasets(const SeqrecSweepSpec& spec, std::vector<SeqrecSweepPoint>& points);

// Validates every point (configuration, variant, model shape, memory prediction; the datasets' files
// are read for their vocabulary) and refuses, before any file is written, an output path that exists
// (unless spec.overwrite) or is not a regular file. Throws std::invalid_argument / io::PathError naming
// the point and the problem.
// Returns the vocabulary (items + padding) of each dataset, by --dataset value. check_outputs false:
// the points only, not their run files' paths (a data-parallel run's other ranks).
std::map<std::string, int64_t> check_seqrec_sweep(const SeqrecSweepSpec& spec,
                                                  const std::vector<SeqrecSweepPoint>& points, bool check_outputs = true);

// --list: every point of spec.partition ("NAME  (dataset=... L=... ...)"), then "N runs"; reads and
// writes nothing (the sweep driver's list_points).
void list_seqrec_sweep(const SeqrecSweepSpec& spec, std::ostream& out);

// Checks (above), then runs every point of spec.partition through the sweep driver (sweep/driver.hpp): loads each dataset once for consecutive points on the same
// (dataset, L, N), writes one run file per point (each complete and flushed when its point ends), one
// summary per point on `out`, the progress line (point i/K, step, ETA of the point and of the sweep)
// on `err` when spec.base.progress. Returns the number of points that failed while training (skipped
// points are not failures).
int run_seqrec_sweep(const SeqrecSweepSpec& spec, const Provenance& prov, std::ostream& out, std::ostream& err);

}  // namespace lobench::seqrec
