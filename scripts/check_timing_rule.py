#!/usr/bin/env python3
"""lobench has one timing rule (variants/timing.hpp): every measured number is a list of samples that
collect_samples gathers, the caller choosing only how one sample is timed and when to stop. This check
keeps it so: every read of a clock in the C++ sources and the Python package (std::chrono's clocks,
clock_gettime, MPI_Wtime, omp_get_wtime, CUDA events' elapsed time, Python's time.perf_counter /
monotonic / time) outside tests/ and bench/ folders (Google Benchmark's loops and the tests) must be in
variants/timing.cpp or in a file listed below with its role: a single reading that becomes one sample of
the rule, a duration recorded as data (an epoch, a phase of a step), a deadline, or progress. A new file
that reads a clock fails until it either uses the rule or is listed here with the reason; a listed file
that no longer reads a clock is reported too (remove it).

Usage: check_timing_rule.py [ROOT]    (exit 1 with file:line for each unlisted read)
       check_timing_rule.py --self-test
"""
import os
import re
import sys

RULE = "variants/timing.cpp"

# file -> why it reads a clock without being a timing loop of its own
ROLES = {
    # one sample of the rule each: collect_samples calls them (the device's own clock)
    "variants/cuda/device_problem.cu": "one timed GPU step (CudaSession::run_timed), a sample of the sweep's rule",
    "variants/cuda/fused_sr_sgd.cu": "the device time of one fused SGD step, reported with its result",
    "variants/cuda/gemm_rate.cu": "one sample of cuBLAS products on the device's clock, collected by the rule",
    # durations recorded as data: single readings, never repeated until enough
    "harness/train/trainer.cpp": "an XMC epoch's, evaluation's and steps' durations, recorded in the run file",
    "harness/train/xmc_sweep.cpp": "progress and ETA of the training sweep",
    "harness/train/frontier_sweep.cpp": "each frontier cell's training time, recorded in its /cells row",
    "harness/seqrec/seqrec_runner.cpp": "a SASRec epoch's and evaluation's durations, and the progress ETA",
    "harness/seqrec/train_step.cpp": "the phases of one SASRec step (forward, loss, backward, optimizer)",
    "harness/seqrec/micro_batch_step.cpp": "the optimizer phase of an accumulated step",
    "harness/shard/collectives.cpp": "time inside MPI collectives, recorded beside each step",
    "harness/shard/label_shard.cpp": "time inside the label-sharded step's collectives",
    "harness/shard/seqrec_data_parallel.cpp": "time inside the data-parallel gradient sum",
    "harness/shard/sharded_step.cpp": "a rank's compute and its wait at the barrier, one step's sample",
    # deadlines and progress
    "harness/io/h5_io.cpp": "a deadline for a child reading a file",
    "harness/sweep/isolated_row.cpp": "--row-timeout's deadline for an isolated row's child",
    "harness/meters/products_cache.cpp": "the bounded wait for another process's products timing (its lock)",
    "harness/sweep/progress.cpp": "progress lines and their ETA",
    # scripts that drive whole processes (the gate and the README's commands)
    "plots/gate_trials.py": "how long each gate trial took, reported beside its verdict",
    "plots/perf_paired.py": "the paired gate's time budget for its rounds",
    "scripts/run_readme.py": "how long each README command took",
    "scripts/compile_times.py": "each compile's and the build's wall time, beside their CPU time",
}

CLOCK = re.compile(r"\b(steady_clock|system_clock|high_resolution_clock)::now\b|\bclock_gettime\s*\(|\bMPI_Wtime\s*\("
                   r"|\bomp_get_wtime\s*\(|\bcudaEventElapsedTime\s*\(|\btime\.(perf_counter|monotonic|time)\s*\(")
ROOTS = ["precision_sim", "datasets", "variants", "harness", "plots", "scripts", "examples"]
SUFFIXES = (".hpp", ".cpp", ".cu", ".cuh", ".h", ".py")


def sources(root):
    for top in ROOTS:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if d not in ("tests", "bench", "__pycache__") and not d.startswith((".", "build")))
            for f in sorted(files):
                if f.endswith(SUFFIXES):
                    yield os.path.relpath(os.path.join(folder, f), root)


def check(root, roles, this_script):
    errors, seen = [], set()
    for path in sources(root):
        if path == this_script:
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                code = line.split("//")[0] if not path.endswith(".py") else line.split("#")[0]
                if not CLOCK.search(code):
                    continue
                seen.add(path)
                if path != RULE and path not in roles:
                    errors.append(f"{path}:{n}: reads a clock outside the timing rule ({RULE}): time it with "
                                  f"collect_samples, or list the file with its role in scripts/check_timing_rule.py")
    for path in sorted(set(roles) - seen):
        errors.append(f"{path}: listed in scripts/check_timing_rule.py but reads no clock any more (remove it)")
    return errors


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        def put(rel, text):
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        put(RULE, "auto t = std::chrono::steady_clock::now();\n")
        put("variants/cpu/probe.cpp", "for (;;) { auto t0 = std::chrono::steady_clock::now(); }\n")
        put("variants/cpu/quiet.cpp", "// steady_clock::now() in a comment\n")
        put("variants/tests/probe_test.cpp", "auto t0 = std::chrono::steady_clock::now();\n")
        put("plots/loop.py", "start = time.perf_counter()\n")
        errs = check(d, {"harness/gone.cpp": "x"}, "")
        want = ["variants/cpu/probe.cpp:1:", "plots/loop.py:1:", "harness/gone.cpp: listed"]
        ok = len(errs) == 3 and all(any(e.startswith(w) for e in errs) for w in want)
        print("\n".join(errs))
        print("self-test:", "ok" if ok else "FAILED")
        return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errors = check(root, ROLES, "scripts/check_timing_rule.py")
    for e in errors:
        print(e)
    if not errors:
        print(f"timing rule: every clock read is {RULE} or a listed role ({len(ROLES)} files)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
