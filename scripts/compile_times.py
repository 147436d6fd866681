#!/usr/bin/env python3
"""Per-unit build-time report: the compile budget of issue 43 (`lobench` alone <= 90 s on 2 fresh cores).

    scripts/compile_times.py [--build-dir build-ct] [--jobs 2] [--top 15] [TARGET ...] [-- CMAKE_ARG ...]

Configures a fresh build folder (removed first; default build-ct/) as scripts/build.sh configures build/,
but with this script as the compiler and linker launcher instead of ccache, builds TARGET (default
`lobench`) and prints the heaviest units with their CPU seconds (user + system of the compiler process
and its children), their wall seconds and peak memory, the totals per language and for the links, and the
build's wall time. CPU seconds are the measure that a shared or loaded machine does not inflate much;
wall time on N idle cores is about CPU / N when the build keeps N units busy. --json FILE also writes
every unit's record; --compare FILE (an earlier --json) adds that build's CPU seconds beside each unit.
The compiler's own output goes to BUILD_DIR/build.log (printed when the build fails).

Launcher mode (what CMake calls; not for people): compile_times.py --record LOG COMMAND ARGS... runs the
command and appends one JSON line (output file, source, cpu_s, wall_s, max_rss_kib, kind) to LOG.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MARK = ".compile_times_folder"  # only a folder this script made is ever removed


def record(log: str, cmd: list[str]) -> int:
    """Runs cmd (a compile or link), appends its resource use to log, returns its exit status."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    out = cmd[cmd.index("-o") + 1] if "-o" in cmd else ""
    sources = [a for a in cmd if a.endswith((".cpp", ".cc", ".cxx", ".c", ".cu"))]
    kind = "link" if not any(a == "-c" for a in cmd) else Path(sources[-1]).suffix.lstrip(".") if sources else "?"
    line = json.dumps({"out": out, "source": sources[-1] if sources else "", "kind": kind,
                       "cpu_s": round(usage.ru_utime + usage.ru_stime, 3), "wall_s": round(wall, 3),
                       "max_rss_kib": usage.ru_maxrss})
    # One write of one line in append mode: parallel units never interleave their records.
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)
    return os.waitstatus_to_exitcode(status)


def short(path: str, build: Path) -> str:
    for root in (str(build) + "/", str(REPO) + "/"):
        if path.startswith(root):
            return path[len(root):]
    return path


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--record":
        return record(sys.argv[2], sys.argv[3:])
    argv = sys.argv[1:]
    cmake_extra = []
    if "--" in argv:
        cmake_extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("targets", nargs="*", default=["lobench"])
    ap.add_argument("--build-dir", default=str(REPO / "build-ct"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--generator", default=None, help="CMake generator (default: CMake's, Unix Makefiles)")
    ap.add_argument("--json", help="also write every unit's record to this file")
    ap.add_argument("--compare", help="an earlier --json file: its CPU seconds beside this build's")
    args = ap.parse_args(argv)

    build = Path(args.build_dir).resolve()
    if build.exists():
        if not (build / MARK).exists():
            print(f"compile_times: {build} exists and was not made by this script; name another --build-dir",
                  file=sys.stderr)
            return 2
        shutil.rmtree(build)
    build.mkdir(parents=True)
    (build / MARK).touch()
    log = build / "compile_times.jsonl"
    launcher = f"{sys.executable};{Path(__file__).resolve()};--record;{log}"
    py = shutil.which("python3") or sys.executable
    has_nanobind = subprocess.run([py, "-c", "import nanobind"], capture_output=True).returncode == 0
    configure = ["cmake", "-S", str(REPO), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                 f"-DLOBENCH_PYTHON_PACKAGE={'ON' if has_nanobind else 'OFF'}", f"-DPython_EXECUTABLE={py}",
                 f"-DLOBENCH_CUDA={os.environ.get('LOBENCH_CUDA', 'AUTO')}",
                 f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}", f"-DCMAKE_C_COMPILER_LAUNCHER={launcher}",
                 f"-DCMAKE_CUDA_COMPILER_LAUNCHER={launcher}", f"-DCMAKE_CXX_LINKER_LAUNCHER={launcher}",
                 f"-DCMAKE_C_LINKER_LAUNCHER={launcher}"] + cmake_extra
    if args.generator:
        configure[1:1] = ["-G", args.generator]
    env = dict(os.environ, CCACHE_DISABLE="1")
    subprocess.run(configure, check=True, env=env, stdout=subprocess.DEVNULL)
    start = time.monotonic()
    load = os.getloadavg()[0]
    with open(build / "build.log", "w") as out:
        rc = subprocess.run(["cmake", "--build", str(build), f"-j{args.jobs}", "--target", *args.targets],
                            env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    wall = time.monotonic() - start
    if rc != 0:
        sys.stderr.write((build / "build.log").read_text()[-20000:])
        print(f"compile_times: the build of {' '.join(args.targets)} failed (exit {rc}); {build}/build.log",
              file=sys.stderr)
        return 1

    units = [json.loads(line) for line in log.read_text().splitlines()]
    if args.json:
        Path(args.json).write_text(json.dumps(units, indent=1) + "\n")
    compiles = sorted((u for u in units if u["kind"] != "link"), key=lambda u: -u["cpu_s"])
    total = sum(u["cpu_s"] for u in units)
    print(f"build of {' '.join(args.targets)} in {build.name}/ (-j{args.jobs}, ccache off): "
          f"{total:.1f} CPU-s in {len(units)} steps, {wall:.1f} s wall "
          f"(load {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end; {os.cpu_count()} cores)")
    by_kind: dict[str, list[float]] = {}
    for u in units:
        by_kind.setdefault(u["kind"], []).append(u["cpu_s"])
    print("  " + ", ".join(f"{k}: {sum(v):.1f} CPU-s in {len(v)}" for k, v in sorted(by_kind.items())))
    before = {}
    if args.compare:
        for u in json.loads(Path(args.compare).read_text()):
            before[unit_name(u)] = u["cpu_s"]
        old_total = sum(before.values())
        print(f"  before ({args.compare}): {old_total:.1f} CPU-s in {len(before)} steps")
    head = f"{'before':>7} " if args.compare else ""
    print(f"\n{head}{'CPU-s':>7} {'wall-s':>7} {'MiB':>6}  unit (heaviest {min(args.top, len(compiles))})")
    for u in compiles[:args.top]:
        was = f"{before[unit_name(u)]:7.1f} " if unit_name(u) in before else f"{'-':>7} " if args.compare else ""
        print(f"{was}{u['cpu_s']:7.1f} {u['wall_s']:7.1f} {u['max_rss_kib'] / 1024:6.0f}  {short(unit_name(u), build)}")
    return 0


def unit_name(u: dict) -> str:
    """The unit's source file, the same in any build folder (a generated unity file by its folder's tail)."""
    name = u["source"] or u["out"]
    return name.split("/CMakeFiles/", 1)[1] if "/CMakeFiles/" in name else name


if __name__ == "__main__":
    sys.exit(main())
