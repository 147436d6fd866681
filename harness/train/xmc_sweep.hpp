// What `lobench train-xmc` does, callable from tests: load one dataset, train every combination of the
// swept options (Cartesian product), write one HDF5 run file per combination, print one summary line per
// run. Runs whose predicted peak memory exceeds the limit are recorded as skipped (their file holds the
// prediction); --dry-run records every run that way.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "datasets/sparse_dataset.hpp"
#include "harness/provenance.hpp"
#include "harness/sweep/axes.hpp"
#include "harness/sweep/partition.hpp"
#include "harness/train/trainer.hpp"

namespace lobench::train {

class ShardedTraining;  // sharded_training.hpp

// The axes of `lobench train-xmc`, with their defaults. labels-total: grow the label space to these
// totals with appended labels that are never positive (ELMO's memory-vs-labels protocol); 0 = as is.
sweep::Axes xmc_axes();

struct XmcSweepSpec {
  // Dataset: a public set's name (bibtex, delicious: datasets/public_datasets.hpp; its files
  // DATA/xmc/NAME-{train,test}.arff + NAME.xml, verified), another Mulan name (read unverified from the
  // data folder), mulan:DIR/NAME, xc:TRAIN_FILE,TEST_FILE (Extreme Classification Repository text
  // format), or synthetic:PRESET (datasets/xmc_presets: LF-AmazonTitles-131K, Amazon-3M, ...; or "tiny").
  std::string dataset = "delicious";
  // The data folder (--data-dir); empty: $LOBENCH_DATA; no other default (a named set needs one).
  std::string data_dir;
  bool verify = true;  // check a public set's files against its sizes and SHA-256 (--no-verify: false)
  double syn_scale = 0.01;  // synthetic: fraction of the preset's rows kept

  // The swept options (harness/sweep/axes.hpp; xmc_axes() declares them with their defaults):
  // labels-total, clf-format, grad-format, subnormals, rounding, update, chunks, dim, batch, enc-precision,
  // activation, enc-lr, clf-lr, dropout, clf-init-std, seeds (the first varies slowest).
  sweep::Axes axes = xmc_axes();

  // Fixed for the whole sweep: the rest of TrainConfig (epochs, schedule, threads, ...).
  TrainConfig base;

  std::string out_dir;
  // Which runs this process makes: i % N == K of the expanded sweep (`--partition K/N`, one part of a
  // job array; `lobench merge` joins the parts' folders). Every run file records its place in the sweep.
  sweep::Partition partition;
  // Set for `--shard labels`: each run's classifier split over processes (every rank runs the same sweep;
  // the primary writes the files and prints). Not owned.
  ShardedTraining* sharded = nullptr;
  int64_t mem_limit = 0;  // bytes; 0: no limit
  bool dry_run = false;
  bool progress = true;   // progress bar on the error stream
  // Replace run files already in out_dir (without it, a sweep whose files exist is refused before it
  // starts). Two runs of one sweep never share a file (--seed 0,0 is refused), and a name that is a
  // symlink is refused rather than followed into its target.
  bool overwrite = false;
  // --resume: keep the runs whose files in out_dir are finished (status ok, skipped or failed, written by
  // this sweep: its `sweep` attribute) and make the others (missing, interrupted, a dry run's); a file of
  // another sweep under a run's name is refused before anything is written.
  bool resume = false;
};

// Refuses, before anything is written, a sweep whose run files in spec.out_dir exist (unless
// spec.overwrite, or spec.resume and they are this sweep's), are symlinks or not regular files, or coincide (two points of one name: a value
// given twice). Throws io::PathError naming the file.
void check_run_paths(const XmcSweepSpec& spec);

// Loads the dataset named by spec (and grows its label space to labels_total when > 0). Throws
// std::runtime_error with a message naming the file or preset on failure.
data::TrainTest load_xmc_dataset(const XmcSweepSpec& spec, int64_t labels_total);

// The run configurations of the sweep, in order, with a file name for each.
struct SweepPoint {
  TrainConfig config;
  int64_t labels_total = 0;
  std::string name;  // file stem: dataset and the values that identify the run
};
std::vector<SweepPoint> expand_sweep(const XmcSweepSpec& spec);
// The points of spec.partition, each with its index in the whole sweep.
std::vector<std::pair<int64_t, SweepPoint>> partition_points(const XmcSweepSpec& spec);

// What makes two train-xmc processes parts of the same sweep: the dataset, every axis with its values and
// every fixed option that changes what is trained (not --threads, --out-dir, --partition, --mem-limit).
// Recorded in each run file as the attribute `sweep`, beside `sweep_index`, `sweep_runs` and `partition`.
std::string sweep_identity(const XmcSweepSpec& spec);

// --list: the file name of every run of spec.partition, then "N runs" (the sweep driver's list_points).
void list_xmc_sweep(const XmcSweepSpec& spec, std::ostream& out);

// Runs the sweep. Returns the number of runs that failed (skipped runs are not failures).
int run_xmc_sweep(const XmcSweepSpec& spec, const Provenance& prov, std::ostream& out, std::ostream& err);

// Predicted-only memory of the published layouts (memory_layouts.hpp) for these label counts, as a table
// on `out` and, when path is not empty, an HDF5 file (/V and /<layout>/<component>_bytes).
void write_layout_table(const std::vector<int64_t>& labels, int64_t D, int64_t B, int64_t chunks, const Provenance& prov,
                        const std::string& path, std::ostream& out);

}  // namespace lobench::train
