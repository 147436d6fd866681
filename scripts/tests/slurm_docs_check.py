#!/usr/bin/env python3
"""The docs' cluster scripts on a real scheduler (ctest slurm_docs).

Starts a one-node Slurm (slurm_cluster.py) and runs, as written, every ```bash block of docs/commands.md
that submits scripts/slurm_partition.sh (the job arrays) and the block of docs/training.md that runs
`salloc ... mpirun` (data-parallel SASRec), with the sizes their `<!-- readme-ci: replace -->` comments
give (parsed by scripts/run_readme.py, as CI runs the README's blocks). Each block runs in a folder laid
out as the repository root (build/lobench, scripts/) and must exit 0. Then:
  - a job array: its parts (merged by the block's `lobench merge`, or as the parts' folders where the block
    does not merge) hold the same rows or run files as the same sweep made by one process (`--out` or
    `--out-dir` of the block's command, without `--partition`), every column equal but the measured ones
    (times, rates, the machine's yardsticks, dates); a block whose command takes `--resume` runs a second
    time and must leave every finished run file as it was;
  - the data-parallel block: its two run files (ranks and one process) have the same per-step losses,
    cut counts and final parameters' hash bit for bit, the first made by R > 1 ranks.
Exit status 77 (ctest's skip) with the reason where the cluster cannot start here: Slurm or munge not
installed, or not root. The daemons are stopped and the folder removed at the end, also on a failure.

Usage: slurm_docs_check.py LOBENCH SOURCE_DIR [MPIRUN]   (MPIRUN empty: lobench was built without MPI and
the data-parallel block is not run, said on stdout)
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent / "plots"))
import lobench_results  # noqa: E402
import run_readme  # noqa: E402
import slurm_cluster  # noqa: E402

SKIP = 77
BLOCK_TIMEOUT_S = 300
# Columns of a run file's /results that depend on the machine's speed or the clock, not on the sweep:
# everything else must be equal between the merged parts and one process.
MEASURED_ROW_COLUMNS = {
    "row_id", "reason", "flags", "utc", "time_median_s", "time_min_s", "time_max_s", "time_cv",
    "effective_gflops", "gemm_gflops", "gemm_fraction", "fma_peak_gflops", "local_gemm_before_gflops",
    "local_gemm_after_gflops", "shape_gemm_gflops", "rss_growth_bytes", "comm_time_s", "rank_time_min_s", "rank_time_max_s",
}
# Fields of a training run file's tables that are measured (seconds, dates); the rest must be equal.
MEASURED_FIELD = re.compile(r"(_s|_utc|^utc|_per_s|rss.*)$")
# Attributes of a training run file that say what was trained (the provenance differs by process).
RUN_ATTRIBUTES = ["status", "sweep", "sweep_index", "sweep_runs", "parameters_hash"]


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    lobench, source = Path(argv[1]).resolve(), Path(argv[2]).resolve()
    mpirun = argv[3] if len(argv) == 4 else ""
    reason = slurm_cluster.unavailable()
    if reason:
        print(f"SKIP: {reason}")
        return SKIP
    arrays = [b for b in shell_blocks(source / "docs/commands.md") if "scripts/slurm_partition.sh" in b.text]
    parallel = [b for b in shell_blocks(source / "docs/training.md") if "salloc" in b.text]
    assert len(arrays) >= 2, f"docs/commands.md: {len(arrays)} job-array blocks, expected run's and train-xmc's"
    assert len(parallel) == 1, f"docs/training.md: {len(parallel)} runnable salloc blocks, expected 1"
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lobench-slurm-") as tmp:
        with slurm_cluster.OneNodeSlurm(Path(tmp) / "slurm") as cluster:
            print(f"one-node Slurm up in {time.monotonic() - started:.1f} s")
            env = cluster.env()
            if os.geteuid() == 0:  # Open MPI refuses root without these (docs/sharding.md)
                env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            if mpirun:  # the block's `mpirun`: the one lobench was built with
                env["PATH"] = f"{Path(mpirun).parent}:{env['PATH']}"
            check_partition_script_refusals(root_like(Path(tmp) / "refusals", lobench, source), env)
            for i, block in enumerate(arrays):
                check_array_block(block, root_like(Path(tmp) / f"array{i}", lobench, source), lobench, env)
            if mpirun:
                check_data_parallel_block(parallel[0], root_like(Path(tmp) / "parallel", lobench, source), env)
            else:
                print("docs/training.md: the data-parallel block is not run: lobench was built without MPI")
    print(f"slurm_docs: ok in {time.monotonic() - started:.1f} s")
    return 0


def shell_blocks(markdown: Path) -> list[run_readme.Block]:
    return [b for b in run_readme.parse_blocks(markdown.read_text(), str(markdown)) if b.language in run_readme.SHELLS]


def root_like(folder: Path, lobench: Path, source: Path) -> Path:
    """A folder where a block written for the repository root runs: build/lobench and scripts/ in it."""
    (folder / "build").mkdir(parents=True)
    (folder / "build" / "lobench").symlink_to(lobench)
    (folder / "scripts").symlink_to(source / "scripts")
    return folder


def block_text(block: run_readme.Block) -> str:
    text = block.text
    for old, new in block.replacements:
        text = text.replace(old, new)
    return text


def commands(text: str) -> list[list[str]]:
    """The block's commands as words: continuation lines joined, comments dropped."""
    return [shlex.split(line, comments=True) for line in text.replace("\\\n", " ").splitlines() if line.strip()]


def run_block(block: run_readme.Block, where: str, folder: Path, env: dict[str, str]) -> str:
    """Runs the block (its replacements made) in FOLDER; returns its stdout and stderr."""
    start = time.monotonic()
    done = subprocess.run(["bash", "-c", "set -euo pipefail\n" + block_text(block)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        logs = "".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}" for p in sorted(folder.glob("*.log")))
        raise AssertionError(f"{where}: exit status {done.returncode} in {seconds:.1f} s\n{block_text(block)}"
                             f"--- output\n{done.stdout}{done.stderr}\n{logs}")
    print(f"{where}: ok in {seconds:.1f} s")
    return done.stdout + done.stderr


def option_value(words: list[str], name: str) -> str | None:
    values = [words[i + 1] for i, w in enumerate(words[:-1]) if w == name]
    return values[-1] if values else None  # the last occurrence wins, as in lobench


def without_option(words: list[str], name: str) -> list[str]:
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif w == name:
            skip = True
        else:
            out.append(w)
    return out


def check_array_block(block: run_readme.Block, folder: Path, lobench: Path, env: dict[str, str]) -> None:
    where = f"docs/commands.md:{block.line}"
    lines = commands(block_text(block))
    submit = next(words for words in lines if words and words[0] == "sbatch")
    script = next(i for i, w in enumerate(submit) if w.endswith("scripts/slurm_partition.sh"))
    assert "--wait" in submit[:script], f"{where}: sbatch without --wait: the block would go on before the parts exist"
    array = next(w.split("=", 1)[1] for w in submit[:script] if w.startswith("--array="))
    first, last = map(int, array.split("-"))
    assert first == 0, f"{where}: --array={array} does not start at 0"
    lobench_args = submit[script + 1:]
    out_option = "--out" if lobench_args[0] == "run" else "--out-dir"
    part_pattern = option_value(lobench_args, out_option)
    assert part_pattern and "%a" in part_pattern, f"{where}: no {out_option} with %a: the tasks would write one file"
    run_block(block, where, folder, env)

    # The same sweep made by one process.
    one = folder / ("one.h5" if out_option == "--out" else "one")
    done = subprocess.run([str(lobench), *without_option(lobench_args, out_option), out_option, str(one)],
                          cwd=folder, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
    assert done.returncode == 0, f"{where}: the one-process sweep failed:\n{done.stdout}{done.stderr}"
    parts = [folder / part_pattern.replace("%a", str(k)) for k in range(last + 1)]
    merge = next((words for words in lines if words[:2] == ["build/lobench", "merge"]), None)
    if out_option == "--out":
        assert merge, f"{where}: the parts of `run` are not merged"
        compare_rows(folder / merge[2], one, where)
    else:
        files = run_files(folder / merge[2]) if merge else {n: p for part in parts for n, p in run_files(part).items()}
        compare_run_folders(files, run_files(one), where)
        if "--resume" in lobench_args:  # a job array can always pass --resume: finished runs are kept
            before = {name: p.stat().st_mtime_ns for name, p in files.items()}
            run_block(block, where + " (again, --resume)", folder, env)
            after = {n: p.stat().st_mtime_ns for part in parts for n, p in run_files(part).items()}
            assert after == before, f"{where}: --resume again rewrote finished runs"


def check_partition_script_refusals(folder: Path, env: dict[str, str]) -> None:
    """scripts/slurm_partition.sh outside a job array, and in an array whose indices are not 0..N-1, exits 2
    with the reason before lobench starts (the parts would not be one sweep's partitions)."""
    outside = subprocess.run(["bash", "scripts/slurm_partition.sh", "run", "--out", "p%a.h5"], cwd=folder,
                             env={k: v for k, v in env.items() if not k.startswith("SLURM_ARRAY")},
                             capture_output=True, text=True, timeout=30)
    assert outside.returncode == 2 and "not a task of a job array" in outside.stderr, outside
    shifted = subprocess.run(["sbatch", "--array=1-2", "--wait", "scripts/slurm_partition.sh", "run", "--V", "40",
                              "--out", "p%a.h5"], cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    logs = "".join(p.read_text() for p in folder.glob("lobench-part-*.log"))
    assert shifted.returncode == 2, (shifted, logs)
    assert logs.count("--array must be 0-1 (every index from 0, once), got 2 tasks from 1 to 2") == 2, logs
    assert not list(folder.glob("p*.h5")), list(folder.glob("p*.h5"))
    print("scripts/slurm_partition.sh: outside an array and for --array=1-2: exit 2 with the reason")


def compare_rows(merged: Path, one: Path, where: str) -> None:
    a, b = lobench_results.read(merged), lobench_results.read(one)
    missing = MEASURED_ROW_COLUMNS - set(b.columns)
    assert not missing, f"measured columns no longer in the run file (rename them here): {sorted(missing)}"
    exact = [c for c in b.columns if c not in MEASURED_ROW_COLUMNS]
    key = ["variant", "backend", "B", "N", "V", "D", "L", "reduction", "threads", "seed", "e_format", "operand"]
    a = a[exact].sort_values(key).reset_index(drop=True)
    b = b[exact].sort_values(key).reset_index(drop=True)
    assert len(a) == len(b) > 0, f"{where}: {len(a)} merged rows, {len(b)} from one process"
    for column in exact:
        x, y = a[column].to_numpy(), b[column].to_numpy()
        same = x == y
        if x.dtype.kind == "f":
            same |= np.isnan(x) & np.isnan(y)
        assert same.all(), f"{where}: column {column} differs: merged {list(x)} one process {list(y)}"
    print(f"{where}: {len(a)} merged rows equal one process's in {len(exact)} columns")


def run_files(folder: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted(folder.glob("*.h5"))}


def compare_run_folders(parts: dict[str, Path], one: dict[str, Path], where: str) -> None:
    assert sorted(parts) == sorted(one) and one, f"{where}: run files {sorted(parts)} against {sorted(one)}"
    for name in one:
        with h5py.File(parts[name], "r") as a, h5py.File(one[name], "r") as b:
            for attribute in RUN_ATTRIBUTES:
                if attribute in b.attrs:
                    assert a.attrs[attribute] == b.attrs[attribute], (where, name, attribute)
            assert b.attrs["status"] == "ok", (where, name, b.attrs.get("reason"))
            compare_tables(a, b, f"{where}: {name}")
    print(f"{where}: {len(one)} run files equal one process's")


def compare_tables(a: h5py.File, b: h5py.File, where: str) -> None:
    """Every table (compound dataset) of the two run files, bit for bit in every field not measured."""
    tables = [k for k in b if isinstance(b[k], h5py.Dataset) and b[k].dtype.names]
    assert tables, f"{where}: no tables"
    for table in tables:
        x, y = a[table][()], b[table][()]
        assert x.shape == y.shape, (where, table, x.shape, y.shape)
        for field in y.dtype.names:
            if MEASURED_FIELD.search(field):
                continue
            if y.dtype[field].kind == "f":
                same = x[field].view(np.uint64 if y.dtype[field].itemsize == 8 else np.uint32) == \
                       y[field].view(np.uint64 if y.dtype[field].itemsize == 8 else np.uint32)
            else:
                same = x[field] == y[field]
            assert np.all(same), f"{where}: /{table} field {field} differs: {x[field]} against {y[field]}"


def check_data_parallel_block(block: run_readme.Block, folder: Path, env: dict[str, str]) -> None:
    where = f"docs/training.md:{block.line}"
    lines = commands(block_text(block))
    ranks_run = next(words for words in lines if words and words[0] == "salloc")
    one_run = next(words for words in lines if words and words[0] == "build/lobench")
    output = run_block(block, where, folder, env)
    assert "Granted job allocation" in output, f"{where}: salloc made no allocation:\n{output}"
    ranks_file, one_file = folder / option_value(ranks_run, "--out"), folder / option_value(one_run, "--out")
    with h5py.File(ranks_file, "r") as a, h5py.File(one_file, "r") as b:
        assert a.attrs["ranks"] > 1 and len(a["ranks"]) == a.attrs["ranks"], (where, a.attrs["ranks"])
        assert "ranks" not in b, where
        assert a.attrs["parameters_hash"] == b.attrs["parameters_hash"], where
        compare_tables(a, b, where)
        ranks, steps = int(a.attrs["ranks"]), len(b["steps"])
    print(f"{where}: {ranks} ranks in an allocation equal one process bit for bit ({steps} steps)")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
