#!/usr/bin/env python3
"""The peers' command-line arguments for the sweep a lobench run file holds: one line per (seed, threads)
of its `sweep_axes` attribute, with the shape axes (--B --N --V --D --L), --operand, --seed, --threads, and the run's
repetition rule (--min-time/--max-reps from its min_time_s/max_reps attributes, else the argv's last
--reps) and warm-up, so that scripts/table2.sh runs every peer at the points lobench ran.

Usage: python3 harness/peers/sweep_peer_args.py RUN.h5
"""
import re
import shlex
import sys

import h5py


def sweep_axes(text):
    """`name=v1,v2;...` -> {name: [values]}"""
    axes = {}
    for part in text.split(";"):
        if "=" in part:
            name, values = part.split("=", 1)
            axes[name.strip()] = [v.strip() for v in values.split(",") if v.strip()]
    return axes


def last_option(argv, name):
    """The value of the last `--name VALUE` or `--name=VALUE` in a command line, or None."""
    found = None
    words = shlex.split(argv)
    for i, w in enumerate(words):
        if w == f"--{name}" and i + 1 < len(words):
            found = words[i + 1]
        elif w.startswith(f"--{name}="):
            found = w.split("=", 1)[1]
    return found


def peer_arg_lines(attrs):
    def text(x):
        return x.decode() if isinstance(x, bytes) else str(x)

    if "sweep_axes" not in attrs:
        raise ValueError("no sweep_axes attribute: not a lobench run file (or a --dry-run of none)")
    axes = sweep_axes(text(attrs["sweep_axes"]))
    missing = [a for a in ("B", "N", "V", "D", "L") if a not in axes]
    if missing:
        raise ValueError(f"sweep_axes lacks {', '.join(missing)}")
    common = [f"--{a} {','.join(axes[a])}" for a in ("B", "N", "V", "D", "L")]
    operands = [op for op in axes.get("operand", ["fp32"]) if op in ("fp32", "tf32", "bf16")]
    common.append(f"--operand {','.join(operands or ['fp32'])}")
    argv = text(attrs.get("argv", ""))
    if "min_time_s" in attrs:
        common.append(f"--min-time {float(attrs['min_time_s']):g}")
        if "max_reps" in attrs:
            common.append(f"--max-reps {int(attrs['max_reps'])}")
    else:
        reps = last_option(argv, "reps")
        if reps is not None and re.fullmatch(r"[0-9]+", reps):
            common.append(f"--reps {reps}")
    warmup = last_option(argv, "warmup")
    if warmup is not None and re.fullmatch(r"[0-9]+", warmup):
        common.append(f"--warmup {warmup}")
    lines = []
    for seed in axes.get("seed", ["0"]):
        for threads in axes.get("threads", ["2"]):
            lines.append(" ".join(common + [f"--seed {seed}", f"--threads {threads}"]))
    return lines


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        with h5py.File(sys.argv[1], "r") as f:
            attrs = dict(f.attrs)
        lines = peer_arg_lines(attrs)
    except (OSError, ValueError) as e:
        print(f"{sys.argv[1]}: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
