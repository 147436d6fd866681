#!/usr/bin/env python3
"""Experiment 2's grid in one table (results/elmo-cpu.md): per rounding and exponent bits e, the final test
P@1 (%) and train loss (nats/row) for each mantissa width m, mean ± std over seeds; **bold** where the cell
differs resolvably from the fp32 reference (plots/elmo_report_numbers.py's rule: the seed ranges do not
overlap and |delta| >= 3 standard errors); "div." where every seed's weights overflowed (loss NaN).

    python3 plots/elmo_exmy_resolved.py results/elmo/exp2_exmy results/elmo/exp2_fp32
"""
import argparse
import collections

import numpy as np

import elmo_common as ec
from elmo_report_numbers import verdict

COLUMNS = (("p_at_1", 100.0, "P@1"), ("train_loss", 1.0, "train loss"))
ROUNDING = {"rne": "RNE", "nearest_even": "RNE", "stochastic": "SR"}


def diverged(r):
    return ec.last(r, "weight_non_finite") > 0 or not np.isfinite(ec.last(r, "train_loss"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("grid", help="folder of the eXmY runs")
    ap.add_argument("reference", help="folder of the fp32 runs of the same setup")
    args = ap.parse_args()
    ref = [r for r in ec.load_dir(args.reference) if ec.status(r) == "ok"]
    cells = collections.defaultdict(list)  # (rounding, e, m) -> runs
    for r in ec.load_dir(args.grid):
        a = r["attrs"]
        cells[(ROUNDING.get(a["clf_rounding"], a["clf_rounding"]), int(a["clf_exponent_bits"]),
               int(a["clf_mantissa_bits"]))].append(r)
    ms = sorted({m for _, _, m in cells})
    print("| rounding | e \\ m | " + " | ".join(f"{name}, m = {m}" if i == 0 else str(m)
                                              for _, _, name in COLUMNS for i, m in enumerate(ms)) + " |")
    print("|---|---|" + "---|" * (len(ms) * len(COLUMNS)))
    last_rounding = None
    for rounding, e in sorted({(k[0], k[1]) for k in cells}):
        row = []
        for col, scale, _ in COLUMNS:
            rv = [scale * ec.last(r, col) for r in ref]
            for m in ms:
                ok = [scale * ec.last(r, col) for r in cells.get((rounding, e, m), []) if not diverged(r)]
                if not cells.get((rounding, e, m)):
                    row.append("")
                elif not ok:
                    row.append("div.")
                else:
                    text = f"{np.mean(ok):.2f} ± {np.std(ok, ddof=1):.2f}" if len(ok) > 1 else f"{ok[0]:.2f}"
                    row.append(f"**{text}**" if verdict(ok, rv) == "yes" else text)
        print(f"| {rounding if rounding != last_rounding else ''} | {e} | " + " | ".join(row) + " |")
        last_rounding = rounding


if __name__ == "__main__":
    main()
