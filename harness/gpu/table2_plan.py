#!/usr/bin/env python3
"""The lobench invocations of Table II on the GPU (harness/gpu/check.sh), in three groups run in order.

    python3 harness/gpu/table2_plan.py harness/sweeps/table2_gpu.args

Prints one invocation a line, `GROUP<TAB>ARGS`, where ARGS follow `lobench run @ARGS_FILE` and override
its grid (the last value of an option wins):

  accuracy   the smallest V, every variant, against the float64 CPU reference
  large      the other V, --no-accuracy
  dense_big  cuda_dense where P·V >= 2^31 (P = B·N), --no-accuracy, one process per (B, N), V ascending

Why the last group is apart: at P·V >= 2^31 cuda_dense hands cuBLAS operands of 3e9 to 1.6e10 elements,
past 32-bit element counts. A fault there is sticky: it poisons the process's CUDA context and every
later GPU row of that process would fail. So these points run last, each (B, N) in its own process,
appending to the same run file (--resume), where a fault costs only the rows after it in that process.
Every (variant, B, N, V) point of the grid is in exactly one invocation.
"""
import argparse
import shlex
import sys

DENSE = "cuda_dense"
DENSE_LIMIT = 2**31  # P·V at or above which cuda_dense runs in the last group


def read_grid(path):
    """The --B, --N, --V and --variants lists of a lobench args file (comments and line breaks allowed)."""
    tokens = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            tokens += shlex.split(line.split("#", 1)[0])
    grid = {}
    for i, t in enumerate(tokens):
        key = t.lstrip("-")
        if t.startswith("--") and key in ("B", "N", "V", "variants") and i + 1 < len(tokens):
            grid[key] = tokens[i + 1].split(",")
    missing = [k for k in ("B", "N", "V", "variants") if k not in grid]
    if missing:
        raise ValueError(f"{path}: no --{', --'.join(missing)}")
    for k in ("B", "N", "V"):
        grid[k] = [int(x) for x in grid[k]]
    return grid


def dense_is_big(B, N, V, limit=DENSE_LIMIT):
    return B * N * V >= limit


def invocation(Bs, Ns, Vs, variants, accuracy):
    args = ["--B", ",".join(map(str, Bs)), "--N", ",".join(map(str, Ns)), "--V", ",".join(map(str, Vs)),
            "--variants", ",".join(variants)]
    return args + ([] if accuracy else ["--no-accuracy"])


def group_invocations(grid, Vs, accuracy, limit):
    """Invocations for V in Vs: the other variants on the whole B×N grid, cuda_dense on its small points
    (grouped into B×N products sharing one V list where they can)."""
    others = [v for v in grid["variants"] if v != DENSE]
    pairs = [(B, N) for B in grid["B"] for N in grid["N"]]
    safe_v = {p: [V for V in Vs if not dense_is_big(*p, V, limit)] for p in pairs}
    if DENSE in grid["variants"] and all(safe_v[p] == list(Vs) for p in pairs):
        return [invocation(grid["B"], grid["N"], Vs, grid["variants"], accuracy)]
    out = [invocation(grid["B"], grid["N"], Vs, others, accuracy)] if others else []
    if DENSE in grid["variants"]:
        for p in pairs:
            if safe_v[p]:
                out.append(invocation([p[0]], [p[1]], safe_v[p], [DENSE], accuracy))
    return out


def plan(grid, limit=DENSE_LIMIT):
    Vs = sorted(grid["V"])
    groups = [("accuracy", inv) for inv in group_invocations(grid, Vs[:1], True, limit)]
    groups += [("large", inv) for inv in group_invocations(grid, Vs[1:], False, limit)] if Vs[1:] else []
    if DENSE in grid["variants"]:
        big = []
        for B in grid["B"]:
            for N in grid["N"]:
                vs = [V for V in Vs if dense_is_big(B, N, V, limit)]
                if vs:
                    big.append((B * N * vs[0], invocation([B], [N], vs, [DENSE], False)))
        groups += [("dense_big", inv) for _, inv in sorted(big, key=lambda x: x[0])]
    return groups


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("args_file", help="lobench args file with --B, --N, --V and --variants")
    ap.add_argument("--dense-limit", type=int, default=DENSE_LIMIT, help="P·V from which cuda_dense runs last")
    a = ap.parse_args(argv)
    try:
        grid = read_grid(a.args_file)
    except (OSError, ValueError) as e:
        print(f"table2_plan.py: {e}", file=sys.stderr)
        return 2
    for group, args in plan(grid, a.dense_limit):
        print(f"{group}\t{' '.join(args)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
