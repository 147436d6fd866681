#!/usr/bin/env python3
"""A sequence file (USER ITEM ITEM ..., the format of ../shared/datasets/seqrec) in which the next item
is a fixed function of the current one: a random cycle through all items, followed with probability
--follow, else a uniformly random item. A model that sees the last item can reach HR@10 ≈ --follow
under leave-one-out; one that ignores it stays at popularity (≈ 10 / items). results/seqrec-cpu.md,
section 3, uses it to separate "the objective cannot learn" from "the optimisation has not started".

    python3 scripts/markov_chain_sequences.py /tmp/chain.txt    # 4,000 users, 2,000 items, seed 1
"""
import argparse
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the sequence file to write (refused if it exists, unless --overwrite)")
    ap.add_argument("--users", type=int, default=4000)
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--min-length", type=int, default=6)
    ap.add_argument("--max-length", type=int, default=20)
    ap.add_argument("--follow", type=float, default=0.8, help="probability that the next item is the cycle's")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--overwrite", action="store_true")
    a = ap.parse_args()
    if not (a.users >= 1 and a.items >= 2 and 2 <= a.min_length <= a.max_length and 0.0 <= a.follow <= 1.0):
        ap.error("need --users >= 1, --items >= 2, 2 <= --min-length <= --max-length, 0 <= --follow <= 1")
    rng = random.Random(a.seed)
    cycle = list(range(1, a.items + 1))
    rng.shuffle(cycle)
    successor = {cycle[i]: cycle[(i + 1) % a.items] for i in range(a.items)}
    lines = []
    for user in range(1, a.users + 1):
        x = rng.randint(1, a.items)
        seq = [x]
        for _ in range(rng.randint(a.min_length, a.max_length) - 1):
            x = successor[x] if rng.random() < a.follow else rng.randint(1, a.items)
            seq.append(x)
        lines.append(f"{user} {' '.join(map(str, seq))}\n")
    try:
        with open(a.out, "w" if a.overwrite else "x") as f:
            f.writelines(lines)
    except FileExistsError:
        ap.error(f"{a.out} exists (give --overwrite to replace it; nothing was written)")


if __name__ == "__main__":
    main()
