#!/usr/bin/env python3
"""Per-epoch table of `lobench train-seqrec` run files (results/seqrec-cpu.md, section 3): the
objective, its output bias (none: SASRec's logits; item: a learned per-item bias), its reduction and
AdamW's eps, then per epoch the mean train loss, test HR@10 / NDCG@10,
dev HR@10 and the seconds of training and of evaluation. Epochs without an evaluation are left out
unless --all.

    python3 plots/seqrec_epochs.py results/seqrec/beauty_loo_*.h5

--best P adds, per run, the epoch early stopping with a patience of P evaluations picks (the best dev
value of the run's selection metric, its `select` attribute: HR@10, or NDCG@20 for --select ndcg@20 runs,
named in the cell; a tie keeping the earlier epoch: train-seqrec --early-stop's rule, applied to the
recorded epochs), its test HR@10 with the standard error sqrt(p(1-p)/n) over the n test users, its test NDCG@10,
and the epoch it would stop after (none: the run ended first, so its best may still be ahead); with
--best-only, only that table.

--at E1,E2,... prints instead one row per run and one column per listed epoch: its test HR@10 there (a
wide table of several runs' curves), each run named by its objective, table and logits, then the
popularity baseline of the runs' data set.

--per-element divides the train loss of a full-vocabulary run under mean_positions by V, so that it
reads on the paper's per-element (mean) scale; sum runs are shown as they are.
"""
import argparse
import math

import h5py


def attr(obj, name, default=float("nan")):
    v = obj.attrs.get(name, default)
    return v.decode() if isinstance(v, bytes) else v


def fmt(x, spec):
    return "" if x != x else format(x, spec)


# train-seqrec --select -> the /epochs column it selects on (run files before the option: hr@10).
SELECT_COLUMNS = {"hr@10": "dev_hr_at_10", "ndcg@20": "dev_ndcg_at_20"}


def best_dev(epochs, patience, column="dev_hr_at_10"):
    """(best row, the epoch early stopping with `patience` evaluations stops after, or 0)."""
    best, since = None, 0
    for e in epochs:
        dev = float(e[column])
        if math.isnan(dev):
            continue
        if best is None or dev > float(best[column]):
            best, since = e, 0
        else:
            since += 1
            if since >= patience:
                return best, int(e["epoch"])
    return best, 0


def best_table(paths, patience):
    print()
    print(f"| run | epochs run | best dev epoch (patience {patience} evaluations) | dev HR@10 | test HR@10 ± SE | "
          "test NDCG@10 | stops after epoch |")
    print("|---|---|---|---|---|---|---|")
    for p in paths:
        with h5py.File(p, "r") as f:
            rows = f["epochs"][:]
            n = int(attr(f, "eval_users", 0))
            select = attr(f, "select", "hr@10")
        best, stop = best_dev(rows, patience, SELECT_COLUMNS[select])
        name = p.rsplit("/", 1)[-1].removesuffix(".h5")
        if best is None:
            print(f"| {name} | {len(rows)} | none evaluated | | | | |")
            continue
        hr = float(best["test_hr_at_10"])
        se = math.sqrt(hr * (1 - hr) / n) if n else float("nan")
        on = "" if select == "hr@10" else f" (on dev {select.upper()})"
        print(f"| {name} | {len(rows)} | {int(best['epoch'])}{on} | {float(best['dev_hr_at_10']):.4f} | {hr:.4f} ± {se:.4f} | "
              f"{float(best['test_ndcg_at_10']):.4f} | {stop if stop else 'none (ended first)'} |")


def describe(f):
    """A run's objective, item table and logits in words (the runs of one figure differ in these)."""
    variant = attr(f, "variant", "?")
    table = "tied" if int(attr(f, "tied", 1)) else "untied"
    logits = "h·o + b (item bias)" if attr(f, "output_bias", "none") == "item" else "h·o (SASRec's)"
    return f"`{variant}`{' (one negative)' if variant == 'sampled' else ''}, {table} table", logits


def at_epochs_table(paths, epochs):
    print("| run | logits | " + " | ".join(str(e) for e in epochs) + " |")
    print("|---|---|" + "---|" * len(epochs))
    popularity = set()
    for p in paths:
        with h5py.File(p, "r") as f:
            rows = {int(e["epoch"]): float(e["test_hr_at_10"]) for e in f["epochs"][:]}
            run, logits = describe(f)
            popularity.add(float(attr(f, "popularity_test_hr_at_10")))
        missing = [e for e in epochs if e not in rows or math.isnan(rows[e])]
        if missing:
            raise SystemExit(f"seqrec_epochs: {p}: no test evaluation at epoch {missing[0]}")
        print(f"| {run} | {logits} | " + " | ".join(f"{rows[e]:.4f}" for e in epochs) + " |")
    if len(popularity) != 1:
        raise SystemExit("seqrec_epochs: --at: the runs' popularity baselines differ (not one data set)")
    print(f"| popularity | | {popularity.pop():.4f} |" + " |" * (len(epochs) - 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--all", action="store_true", help="also the epochs without an evaluation")
    ap.add_argument("--per-element", action="store_true", help="mean_positions train loss divided by V")
    ap.add_argument("--best", type=int, metavar="P", help="the best dev epoch under early stopping with patience P")
    ap.add_argument("--best-only", action="store_true", help="with --best: print only the early-stopping table")
    ap.add_argument("--at", metavar="E1,E2,...", help="one row per run: test HR@10 at these epochs")
    a = ap.parse_args()
    if a.at:
        try:
            epochs = [int(e) for e in a.at.split(",")]
        except ValueError:
            ap.error(f"--at: {a.at!r} is not a comma-separated list of epochs")
        at_epochs_table(a.paths, epochs)
        return
    if a.best_only:
        if not a.best:
            ap.error("--best-only needs --best P")
        best_table(a.paths, a.best)
        return
    print("| run | objective | output bias | reduction | eps | epoch | train loss | test HR@10 | test NDCG@10 | dev HR@10 | "
          "s per epoch (+ eval) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    popularity = {}  # data set -> popularity HR@10 its runs recorded
    for p in a.paths:
        with h5py.File(p, "r") as f:
            variant = attr(f, "variant", "?")
            reduction = attr(f, "reduction", "mean")  # run files before the option: the paper's mean
            eps = attr(f, "adam_eps", 1e-8)
            bias = attr(f, "output_bias", "none")  # run files before the option had none
            V = int(attr(f, "V", 1))
            scale = V if a.per_element and reduction == "mean_positions" and variant != "sampled" else 1
            name = p.rsplit("/", 1)[-1].removesuffix(".h5")
            for e in f["epochs"][:]:
                evaluated = not math.isnan(float(e["test_hr_at_10"]))
                if not evaluated and not a.all:
                    continue
                eval_s = float(e["eval_s"])
                secs = f"{float(e['epoch_s']):,.0f}" + (f" (+ {eval_s:,.0f})" if evaluated else "")
                print(f"| {name} | {variant} | {bias} | {reduction if variant != 'sampled' else '(its own)'} | {eps:g} | {int(e['epoch'])} | "
                      f"{float(e['train_loss']) / scale:.4g} | {fmt(float(e['test_hr_at_10']), '.4f')} | "
                      f"{fmt(float(e['test_ndcg_at_10']), '.4f')} | {fmt(float(e['dev_hr_at_10']), '.4f')} | {secs} |")
            # one popularity baseline per data set (several data sets in one call used to print the last file's only)
            popularity.setdefault(str(attr(f, "dataset", "?")).rsplit("/", 1)[-1], attr(f, "popularity_test_hr_at_10"))
    print()
    for dataset, pop in popularity.items():
        print(f"popularity (test, history excluded as the runs){', ' + dataset if len(popularity) > 1 else ''}: HR@10 {pop:.4f}")
    if a.best:
        best_table(a.paths, a.best)


if __name__ == "__main__":
    main()
