#!/usr/bin/env python3
"""Planned against simulated steps on random heterogeneous clusters no test has seen.

    python3 scripts/random_cluster_predictions.py [COUNT] [SEED]      (defaults 24, 20261128)

Writes COUNT random cluster configs (2-3 node types, 2-4 groups of rings, switches, fully
connected groups and 2-D tori under a slower upper level; ResNet-18/50 or VGG-11 at batch
64-256) into a scratch folder, runs `build/fastsim compare CONFIG --simulate` on each, and prints
the distribution of |planned - simulated| / simulated over every config x planner cell, by
cluster size, with the worst cells. Needs a built build/fastsim.
"""
import csv, os, random, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TYPES = [("a16", 16, 700, 12.8, "lpddr4"), ("b32", 32, 1000, 25.6, "lpddr4"),
         ("c64", 64, 1200, 256, "hbm2"), ("d32", 32, 1400, 100, "hbm2")]


def config(rng):
    types = rng.sample(TYPES, rng.randint(2, 3))
    lines = ["run: {mode: cluster}",
             "workload: {trace: %s/traces/%s, batch: %d}" % (
                 ROOT, rng.choice(["resnet18.yaml", "resnet50.yaml", "vgg11.yaml"]), rng.choice([64, 128, 256])),
             "node_types:"]
    for name, a, clock, bw, dram in types:
        lines.append("  - {name: %s, clock_mhz: %d, array: {rows: %d, cols: %d}, sram: {exponent_bank: "
                     "{capacity_kib: 64, bits_per_cycle: 256}, mantissa_bank: {capacity_kib: 1024, bits_per_cycle: "
                     "4096}}, dram: {type: %s, bandwidth_gb_per_s: %s, latency_ns: 100}, precision: {weights: 4, "
                     "activations: 4, gradients: 4}}" % (name, clock, a, a, dram, bw))
    lines.append("cluster:\n  groups:")
    nodes = 0
    for _ in range(rng.randint(2, 4)):
        topology = rng.choice(["ring", "fully_connected", "switch", "torus2d"])
        extra = ""
        if topology == "torus2d":
            rows, cols = rng.choice([(2, 2), (2, 3), (3, 3), (2, 4)])
            count, extra = rows * cols, ", torus: {rows: %d, cols: %d}" % (rows, cols)
        else:
            count = rng.randint(1, 8)
        nodes += count
        lines.append("    - {node_type: %s, count: %d, topology: %s%s, link: {bandwidth_gb_per_s: %d, latency_ns: "
                     "%d, energy_pj_per_bit: 5}}" % (rng.choice(types)[0], count, topology, extra,
                                                     rng.choice([25, 50, 100, 200]), rng.choice([100, 300, 500, 1000])))
    lines.append("  upper: {topology: %s, link: {bandwidth_gb_per_s: %d, latency_ns: %d, energy_pj_per_bit: 10}}" % (
        rng.choice(["fully_connected", "switch"]), rng.choice([5, 10, 25]), rng.choice([500, 1000, 2000])))
    lines.append("planner: {name: accpar}")
    return nodes, "\n".join(lines) + "\n"


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 24
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 20261128)
    cells = []  # (error_percent, nodes, config, planner)
    with tempfile.TemporaryDirectory() as scratch:
        for i in range(count):
            nodes, text = config(rng)
            path = os.path.join(scratch, "rc%02d_n%d.yaml" % (i, nodes))
            open(path, "w").write(text)
            out = path[:-5]
            run = subprocess.run([os.path.join(ROOT, "build/fastsim"), "compare", path, "--simulate", "--max-work", "60",
                                  "--out", out], capture_output=True, text=True)
            if run.returncode != 0:
                print("%s: %s" % (os.path.basename(path), run.stderr.strip().splitlines()[-1]))
                continue
            for row in csv.DictReader(open(os.path.join(out, "compare.csv"))):
                if not row["error"] and row["prediction_error"]:
                    cells.append((abs(float(row["prediction_error"])) * 100, nodes, os.path.basename(path), row["planner"]))
    errors = sorted(c[0] for c in cells)
    share = lambda limit: sum(e > limit for e in errors)
    print("%d cells: median %.2f%%, p90 %.2f%%, max %.2f%%; over 2%%: %d, over 5%%: %d" % (
        len(errors), statistics.median(errors), errors[int(0.9 * len(errors))], errors[-1], share(2), share(5)))
    for name, lo, hi in [("4-8 nodes", 0, 8), ("9-16 nodes", 9, 16), ("17-32 nodes", 17, 32)]:
        part = [c[0] for c in cells if lo <= c[1] <= hi]
        if part:
            print("  %s: %d cells, median %.2f%%, max %.2f%%, over 5%%: %d" % (
                name, len(part), statistics.median(part), max(part), sum(e > 5 for e in part)))
    for e, _, name, planner in sorted(cells)[-5:]:
        print("  worst: %.1f%% %s %s" % (e, name, planner))


if __name__ == "__main__":
    main()
