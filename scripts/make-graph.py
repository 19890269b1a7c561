#!/usr/bin/env python3
"""A random graph directory in heed's graph format (README.md, "Graph tasks"), for scale tests.

    scripts/make-graph.py OUT NODES EDGES [--features 128] [--nonzeros 16] [--classes 7]
                          [--split 10000] [--seed 1]

EDGES undirected edges between uniformly random node pairs (no self-loops; a repeated pair is
drawn again, so there are exactly EDGES distinct edges); each node has NONZEROS distinct random
feature columns of FEATURES, all 1 (a bag of words, as Cora's); a random class of CLASSES;
train, val and test are SPLIT random nodes each. Standard library only; the same seed gives the
same files.
"""
import argparse
import os
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("nodes", type=int)
    ap.add_argument("edges", type=int)
    ap.add_argument("--features", type=int, default=128)
    ap.add_argument("--nonzeros", type=int, default=16)
    ap.add_argument("--classes", type=int, default=7)
    ap.add_argument("--split", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.nodes < 2 or a.edges > a.nodes * (a.nodes - 1) // 2 or a.nonzeros > a.features or 3 * a.split > a.nodes:
        ap.error("impossible sizes")
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    columns = range(a.features)
    with open(os.path.join(a.out, "features.txt"), "w") as f:
        ones = " | " + " ".join(["1"] * a.nonzeros) + "\n"
        for _ in range(a.nodes):
            f.write(" ".join(map(str, sorted(rng.sample(columns, a.nonzeros)))) + ones)
    with open(os.path.join(a.out, "labels.txt"), "w") as f:
        f.write("".join(f"{rng.randrange(a.classes)}\n" for _ in range(a.nodes)))
    seen = set()
    with open(os.path.join(a.out, "edges.txt"), "w") as f:
        lines = []
        while len(seen) < a.edges:
            i, j = rng.randrange(a.nodes), rng.randrange(a.nodes)
            if i == j:
                continue
            key = (min(i, j), max(i, j))
            if key in seen:
                continue
            seen.add(key)
            lines.append(f"{key[0]} {key[1]}\n")
            if len(lines) == 100000:
                f.write("".join(lines))
                lines = []
        f.write("".join(lines))
    split = rng.sample(range(a.nodes), 3 * a.split)
    for k, name in enumerate(("train", "val", "test")):
        with open(os.path.join(a.out, f"{name}.txt"), "w") as f:
            f.write("".join(f"{i}\n" for i in split[k * a.split:(k + 1) * a.split]))


if __name__ == "__main__":
    main()
