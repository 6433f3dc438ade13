#!/usr/bin/env python3
"""Random heterogeneous cluster configs that no test was written for, and their prediction errors.

    python3 scripts/random_clusters.py generate N DIR [--seed S] [--max-nodes M]
    python3 scripts/random_clusters.py measure N [--seed S] [--max-nodes M] [--fastsim PATH] [--keep DIR]

`generate` writes N configs (DIR/rcNNN_nM.yaml) drawn from this space:
  - 2-4 node types (array 16-128, clock 500-1400 MHz, LPDDR4 or HBM2 of 12.8-400 GB/s, 2/4/8-bit
    mantissas), each group of one type;
  - 4-256 nodes in 2-8 groups, each group a ring, switch, fully connected group, tree, 2-D or 3-D
    torus (or a two-dimension `dimensions` list) of 25-400 GB/s links, 100-2000 ns;
  - one slower upper level (ring, switch or fully connected, 5-50 GB/s, 500-5000 ns);
  - one of six networks (AlexNet, VGG-11, VGG-16, ResNet-18, ResNet-50, BERT-base) at a batch of
    32-1024 (never below the node count of the cluster when it is below 1024 samples).
Sizes are drawn evenly over the buckets 4-8, 9-16, 17-32, 33-64, 65-128 and 129-256 nodes.

`measure` generates N configs into a scratch folder (or --keep DIR), runs
`fastsim compare CONFIG --simulate` on each (every planner), and prints the distribution of
|planned - simulated| / simulated over the config x planner cells by size and by planner, the worst
cells, and how far each config's accpar and alpa plans simulate from the fastest planner's plan.
"""
import argparse, csv, os, random, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETWORKS = ["alexnet", "vgg11", "vgg16", "resnet18", "resnet50", "bert_base_encoder"]
BUCKETS = [(4, 8), (9, 16), (17, 32), (33, 64), (65, 128), (129, 256)]
PLANNERS = ["data_parallel", "data_parallel_balanced", "owt", "hypar", "accpar", "tofu", "pipeline", "alpa"]


def node_type(rng, name):
    array = rng.choice([16, 32, 64, 128])
    dram, bandwidth = rng.choice([("lpddr4", 12.8), ("lpddr4", 25.6), ("hbm2", 100), ("hbm2", 256), ("hbm2", 400)])
    bits = rng.choice([2, 4, 8])
    return name, ("  - {name: %s, clock_mhz: %d, array: {rows: %d, cols: %d}, sram: {exponent_bank: "
                  "{capacity_kib: 64, bits_per_cycle: 256}, mantissa_bank: {capacity_kib: 1024, bits_per_cycle: 4096}}, "
                  "dram: {type: %s, bandwidth_gb_per_s: %s, latency_ns: 100}, precision: {weights: %d, "
                  "activations: %d, gradients: %d}}" % (name, rng.choice([500, 700, 1000, 1200, 1400]), array, array,
                                                        dram, bandwidth, bits, bits, max(bits, 4)))


def link(rng, bandwidths, latencies):
    return "{bandwidth_gb_per_s: %d, latency_ns: %d, energy_pj_per_bit: 5}" % (rng.choice(bandwidths),
                                                                               rng.choice(latencies))


def group(rng, type_name, count):
    """A group of about `count` nodes: (nodes, yaml line)."""
    kinds = ["ring", "switch", "fully_connected", "tree", "torus2d", "torus3d", "dimensions"]
    kind = rng.choice(kinds if count <= 64 else [k for k in kinds if k != "fully_connected"])
    l = link(rng, [25, 50, 100, 200, 400], [100, 300, 500, 1000, 2000])
    head = "    - {node_type: %s, " % type_name
    if kind in ("torus2d", "dimensions") and count >= 4:
        cols = max(2, int(round(count ** 0.5)))
        rows = max(2, count // cols)
        if kind == "torus2d":
            return rows * cols, head + "count: %d, topology: torus2d, torus: {rows: %d, cols: %d}, link: %s}" % (
                rows * cols, rows, cols, l)
        return rows * cols, head + "dimensions: [{topology: %s, count: %d, link: %s}, {topology: %s, count: %d, " \
            "link: %s}], link: %s}" % (rng.choice(["switch", "fully_connected", "ring"]), cols,
                                       link(rng, [100, 200, 400], [100, 300]), rng.choice(["ring", "switch"]), rows,
                                       link(rng, [25, 50, 100], [500, 1000, 2000]), l)
    if kind == "torus3d" and count >= 8:
        side = max(2, int(round(count ** (1 / 3))))
        depth = max(1, count // (side * side))
        return depth * side * side, head + "count: %d, topology: torus3d, torus: {depth: %d, rows: %d, cols: %d}, " \
            "link: %s}" % (depth * side * side, depth, side, side, l)
    if kind == "tree":
        return count, head + "count: %d, topology: tree, tree_fanout: %d, link: %s}" % (count, rng.choice([2, 4, 8]), l)
    kind = kind if kind in ("ring", "switch", "fully_connected") else "ring"
    return count, head + "count: %d, topology: %s, link: %s}" % (count, kind, l)


def config(rng, max_nodes=256, traces=os.path.join(ROOT, "traces")):
    """One random cluster config: (nodes, network, yaml text); its trace path is `traces`/NAME.yaml."""
    buckets = [b for b in BUCKETS if b[0] <= max_nodes]
    lo, hi = rng.choice(buckets)
    target = rng.randint(lo, min(hi, max_nodes))
    types = [node_type(rng, "t%d" % i) for i in range(rng.randint(2, 4))]
    groups = rng.randint(2, min(8, max(2, target // 2)))
    sizes = [1] * groups
    for _ in range(target - groups):
        sizes[rng.randrange(groups)] += 1
    lines, nodes = [], 0
    for i, size in enumerate(sizes):
        count, line = group(rng, types[i % len(types)][0] if i < len(types) else rng.choice(types)[0], size)
        nodes += count
        lines.append(line)
    network = rng.choice(NETWORKS)
    batch = rng.choice([b for b in [32, 64, 128, 256, 512, 1024] if b >= min(nodes, 1024)] or [1024])
    text = "\n".join(
        ["# random_clusters.py: %d nodes, %d node types, %d groups" % (nodes, len(types), len(sizes)),
         "run: {mode: cluster}",
         "workload: {trace: %s/%s.yaml, batch: %d}" % (traces, network, batch),
         "node_types:"] + [t[1] for t in types] + ["cluster:", "  groups:"] + lines +
        ["  upper: {topology: %s, link: %s}" % (rng.choice(["ring", "switch", "fully_connected"]),
                                                link(rng, [5, 10, 25, 50], [500, 1000, 2000, 5000])),
         "planner: {name: accpar}", ""])
    return nodes, network, text


def generate(count, folder, seed, max_nodes):
    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    paths = []
    traces = os.path.relpath(os.path.join(ROOT, "traces"), os.path.abspath(folder))
    for i in range(count):
        nodes, network, text = config(rng, max_nodes, traces)
        path = os.path.join(folder, "rc%03d_n%d.yaml" % (i, nodes))
        with open(path, "w") as f:
            f.write(text)
        paths.append((path, nodes, network))
    return paths


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def summary(label, errors):
    if not errors:
        return
    print("| %s | %d | %.2f | %.2f | %.2f | %.1f%% |" % (label, len(errors), statistics.median(errors),
                                                        percentile(errors, 0.9), max(errors),
                                                        100.0 * sum(e > 5 for e in errors) / len(errors)))


def measure(args):
    fastsim = args.fastsim or os.path.join(ROOT, "build/fastsim")
    scratch = args.keep or tempfile.mkdtemp(prefix="random_clusters.")
    cells, refused, losses = [], [], []  # cells: (error %, nodes, config, planner)
    started = time.time()
    for path, nodes, network in generate(args.count, scratch, args.seed, args.max_nodes):
        name = os.path.basename(path)[:-5]
        out = path[:-5]
        t0 = time.time()
        run = subprocess.run([fastsim, "compare", path, "--simulate", "--out", out, "--force", "--max-work", str(args.max_work)],
                             capture_output=True, text=True)
        if run.returncode != 0:
            lines = (run.stderr.strip() or "exit %d" % run.returncode).splitlines()
            refused.append("%s (%s): %s" % (name, network, lines[-1][:160]))
            continue
        rows = list(csv.DictReader(open(os.path.join(out, "compare.csv"))))
        simulated = {}
        for row in rows:
            if row["error"] or not row["prediction_error"]:
                if row["planner"] == "data_parallel_balanced" and row["error"]:
                    refused.append("%s (%s): data_parallel_balanced: %s" % (name, network, row["error"][:160]))
                continue
            cells.append((abs(float(row["prediction_error"])) * 100, nodes, name, row["planner"]))
            simulated[row["planner"]] = float(row["simulated_step_s"])
        if simulated:
            best = min(simulated.values())
            for planner in ("accpar", "alpa"):
                if planner in simulated:
                    losses.append((100 * (simulated[planner] / best - 1), name, planner))
        print("%s: %d nodes, %s, %.1f s" % (name, nodes, network, time.time() - t0), file=sys.stderr)
    errors = [c[0] for c in cells]
    print("%d configs (seed %d), %d config x planner cells, %.0f s\n" % (args.count, args.seed, len(cells),
                                                                          time.time() - started))
    print("| cells | count | median % | p90 % | max % | beyond 5% |")
    print("|---|---|---|---|---|---|")
    summary("all", errors)
    for lo, hi in BUCKETS:
        summary("%d-%d nodes" % (lo, hi), [c[0] for c in cells if lo <= c[1] <= hi])
    for planner in PLANNERS:
        summary(planner, [c[0] for c in cells if c[3] == planner])
    print()
    for e, nodes, name, planner in sorted(cells)[-8:]:
        print("worst: %.1f%% %s %s" % (e, name, planner))
    over = [l for l in losses if l[0] > 2]
    print("\naccpar/alpa plans simulating more than 2%% slower than the fastest planner's: %d of %d" % (
        len(over), len(losses)))
    for loss, name, planner in sorted(over)[-8:]:
        print("  %s %s: +%.1f%%" % (name, planner, loss))
    for line in refused:
        print("refused: " + line)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate")
    g.add_argument("count", type=int)
    g.add_argument("folder")
    m = sub.add_parser("measure")
    m.add_argument("count", type=int)
    m.add_argument("--fastsim")
    m.add_argument("--keep")
    m.add_argument("--max-work", type=float, default=300)
    for p in (g, m):
        p.add_argument("--seed", type=int, default=20261128)
        p.add_argument("--max-nodes", type=int, default=256)
    args = parser.parse_args()
    if args.command == "generate":
        for path, nodes, network in generate(args.count, args.folder, args.seed, args.max_nodes):
            print("%s\t%d\t%s" % (path, nodes, network))
    else:
        measure(args)


if __name__ == "__main__":
    main()
