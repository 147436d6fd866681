#!/usr/bin/env python3
"""Per-epoch table of `lobench train-seqrec` run files (results/seqrec-cpu.md, section 3): the
objective, its output bias (none: SASRec's logits; item: a learned per-item bias), its reduction and
AdamW's eps, then per epoch the mean train loss, test HR@10 / NDCG@10,
dev HR@10 and the seconds of training and of evaluation. Epochs without an evaluation are left out
unless --all.

    python3 plots/seqrec_epochs.py results/seqrec/beauty_loo_*.h5

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--all", action="store_true", help="also the epochs without an evaluation")
    ap.add_argument("--per-element", action="store_true", help="mean_positions train loss divided by V")
    a = ap.parse_args()
    print("| run | objective | output bias | reduction | eps | epoch | train loss | test HR@10 | test NDCG@10 | dev HR@10 | "
          "s per epoch (+ eval) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
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
            pop = attr(f, "popularity_test_hr_at_10")
    print()
    print(f"popularity (test, history excluded as the runs): HR@10 {pop:.4f}")


if __name__ == "__main__":
    main()
