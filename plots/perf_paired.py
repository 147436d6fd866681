#!/usr/bin/env python3
"""The paired measurement of the performance gate (issue 41): two benchmark binaries, the baseline
commit's and the candidate's, run alternately on one machine in one session, as `asv continuous` does.

    python3 plots/perf_paired.py --base BIN --cand BIN --out-dir DIR [--rounds 9] [--shapes 16000x64,...]
                                 [--base-commit C] [--cand-commit C] [--cand-env NAME=VALUE ...] [--seed S]

Each round runs each binary once (one process, one repetition of every benchmark, the benchmarks in a
random order within the process: Google Benchmark's --benchmark_enable_random_interleaving), the two in
a random order, so that neither side always runs first. The rounds' files are merged into DIR/base.json
and DIR/cand.json: Google Benchmark JSON whose repetition k is round k, with the same `pairing` id in
both contexts. `lobench compare DIR/base.json DIR/cand.json` (plots/perf_compare.py) sees the id and
compares round by round (plots/perf_stats.paired_test) instead of as two independent samples.

--cand-env sets a variable for the candidate's processes only (the tests' injected slowdown:
LOBENCH_INJECT_SLOWDOWN=1.3, docs/dashboard.md). Exit status: 0 done, 2 usage or a binary that failed
(its exit status or signal is named).
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid

FILTER = "^(gemm|fused|chunked)/"


class PairedError(Exception):
    """A binary that cannot run or failed: exit status 2."""


def run_once(binary, shapes, commit, env_extra, out, timeout):
    env = dict(os.environ, LOBENCH_BENCH_SHAPES=shapes, **env_extra)
    cmd = [binary, f"--benchmark_filter={FILTER}", "--benchmark_repetitions=1", "--benchmark_min_time=0.05",
           "--benchmark_enable_random_interleaving=true", f"--benchmark_out={out}", "--benchmark_out_format=json",
           f"--benchmark_context=commit={commit}"]
    try:
        r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PairedError(f"{binary}: still running after {timeout} s; stopped")
    except OSError as e:
        raise PairedError(f"{binary}: cannot run ({e.strerror})")
    if r.returncode != 0:
        how = (f"killed by signal {signal.Signals(-r.returncode).name}" if r.returncode < 0
               else f"exit status {r.returncode}")
        last = r.stderr.strip().splitlines()[-1:] or ["no message"]
        raise PairedError(f"{binary}: {how} ({last[0][:200]})")
    with open(out) as f:
        data = json.load(f)
    if not any(b.get("run_type") != "aggregate" and not b.get("error_occurred") for b in data.get("benchmarks", [])):
        raise PairedError(f"{binary}: wrote no benchmark result to {out}")
    return data


def cpuinfo():
    """The first processor's fields of /proc/cpuinfo ({} where it cannot be read)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the end of the first processor's block
                key, sep, value = line.partition(":")
                if sep:
                    fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


def cpu_model():
    """The CPU's model name as lobench's run files record it (harness/provenance.cpp: /proc/cpuinfo's first
    "model name"), so that a paired run and a run file of one machine get one fingerprint."""
    return cpuinfo().get("model name", "unknown")


def merge(parts, pairing, side, order):
    """One Google Benchmark JSON whose repetition k is parts[k]'s single run."""
    merged = dict(parts[0])
    merged["context"] = dict(parts[0].get("context", {}), pairing=pairing, pairing_side=side,
                             pairing_order=order, cpu_model=cpu_model(), hardware_threads=os.cpu_count() or 0)
    merged["benchmarks"] = []
    for k, data in enumerate(parts):
        for b in data.get("benchmarks", []):
            if b.get("run_type") == "aggregate":
                continue
            merged["benchmarks"].append(dict(b, repetition_index=k, repetitions=len(parts)))
    return merged


def measure(args):
    os.makedirs(args.out_dir, exist_ok=True)
    rng = random.Random(args.seed)
    pairing = uuid.uuid4().hex[:16]
    sides = {"base": (args.base, args.base_commit, {}), "cand": (args.cand, args.cand_commit, args.cand_env)}
    parts = {"base": [], "cand": []}
    order = []
    start = time.time()
    for k in range(args.rounds):
        first = rng.choice(("base", "cand"))
        order.append(first)
        for side in (first, "cand" if first == "base" else "base"):
            binary, commit, env = sides[side]
            out = os.path.join(args.out_dir, f"{side}.{k}.json")
            parts[side].append(run_once(binary, args.shapes, commit, env, out, args.timeout))
        elapsed = time.time() - start
        eta = elapsed / (k + 1) * (args.rounds - k - 1)
        print(f"perf_paired: round {k + 1}/{args.rounds} ({first} first), {elapsed:.0f} s, ETA {eta:.0f} s",
              file=sys.stderr, flush=True)
    order_text = "".join("b" if s == "base" else "c" for s in order)
    for side in ("base", "cand"):
        with open(os.path.join(args.out_dir, f"{side}.json"), "w") as f:
            json.dump(merge(parts[side], pairing, side, order_text), f)
    return pairing


def parse_env(items):
    env = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.isidentifier():
            raise PairedError(f"--cand-env {item!r}: want NAME=VALUE")
        env[name] = value
    return env


def main(argv=None):
    ap = argparse.ArgumentParser(prog="perf_paired.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the baseline commit's step_bench")
    ap.add_argument("--cand", required=True, help="the candidate's step_bench")
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--rounds", type=int, default=9, help="rounds (default 9; at least 5 to be testable)")
    ap.add_argument("--shapes", default="16000x64,32000x128", help="VxD,... (LOBENCH_BENCH_SHAPES)")
    ap.add_argument("--base-commit", default="base")
    ap.add_argument("--cand-commit", default="cand")
    ap.add_argument("--cand-env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--seed", type=int, default=None, help="the rounds' order (default: random)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds one process may take (default 300)")
    args = ap.parse_args(argv)
    if not 1 <= args.rounds <= 1000:
        ap.error(f"--rounds {args.rounds}: want 1 to 1000")
    try:
        args.cand_env = parse_env(args.cand_env)
        for b in (args.base, args.cand):
            if not (os.path.isfile(b) and os.access(b, os.X_OK)):
                raise PairedError(f"{b}: not an executable file")
        pairing = measure(args)
    except PairedError as e:
        print(f"perf_paired: {e}", file=sys.stderr)
        return 2
    print(f"perf_paired: pairing {pairing}: {args.out_dir}/base.json, {args.out_dir}/cand.json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
