#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Plan and run time and peak memory against node count (docs/performance.md, "Scaling").

For each model and cluster size, writes a config of G 4x4 tori of TPU-v3-like nodes under one
switch (as configs/pipeline/gpt3_175b_1024node.yaml defines them; G = nodes / 16) and times
`fastsim plan` and `fastsim run` of it with GNU time (wall seconds, peak resident memory), each
once, under a time limit. A command fastsim refuses (work or memory) is reported with the
reason it gives. Prints a Markdown table.

    python3 scripts/bench_scale.py [--fastsim build/fastsim] [--nodes 16,64,256,1024,4096]
                                   [--models resnet50,gpt3_6.7b,gpt3_175b] [--timeout 600]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NODE_TYPE = """node_types:
  - name: tpu_v3_like
    source: "4 x 128x128 arrays, 940 MHz, 32 GiB at 900 GB/s (AccPar's TPU-v3)"
    arrays: 4
    clock_mhz: 940
    array: {rows: 128, cols: 128}
    sram:
      exponent_bank: {capacity_kib: 1024, bits_per_cycle: 1024}
      mantissa_bank: {capacity_kib: 8192, bits_per_cycle: 16384}
    dram: {type: hbm2, bandwidth_gb_per_s: 900, latency_ns: 100, capacity_gib: 32}
    precision: {weights: 8, activations: 8, gradients: 8}
"""

# model -> (trace, batch for a cluster of n nodes, planner block)
MODELS = {
    "resnet50": ("traces/resnet50.yaml", lambda n: 4 * n, "planner:\n  name: accpar\n"),
    "gpt3_6.7b": ("traces/gpt3_6.7b.yaml", lambda n: n,
                  "planner:\n  name: alpa\n  pipeline: {schedule: 1f1b, intra: accpar}\n"),
    "gpt3_175b": ("traces/gpt3_175b.yaml", lambda n: 1536,
                  "planner:\n  name: alpa\n  pipeline: {schedule: 1f1b, intra: accpar}\n"),
}


def config_text(model, nodes):
    trace, batch, planner = MODELS[model]
    tori = max(1, nodes // 16)
    group = ("    - {node_type: tpu_v3_like, count: 16, topology: torus2d, torus: {rows: 4, cols: 4}, "
             "link: {bandwidth_gb_per_s: 62.5, latency_ns: 1000, energy_pj_per_bit: 10}}\n")
    upper = ("  upper:\n    topology: switch\n    link: {bandwidth_gb_per_s: 12.5, latency_ns: 2000, "
             "energy_pj_per_bit: 30}\n" if tori > 1 else "")  # one torus: no switch
    return "run:\n  mode: cluster\n\nworkload:\n  trace: %s\n  batch: %d\n\n%s\ncluster:\n  groups:\n%s%s\n%s" % (
        os.path.join(ROOT, trace), batch(nodes), NODE_TYPE, group * tori, upper, planner)


def timed(fastsim, command, config, out, timeout):
    """(wall s, peak MiB, note) of one command."""
    argv = ["/usr/bin/time", "-f", "TIME %e %M", fastsim, command, config, "--max-work", "100000",
            "--out", out, "--force"]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None, "not done in %d s" % timeout
    m = re.search(r"TIME ([0-9.]+) ([0-9]+)", r.stderr)
    wall, mib = (float(m.group(1)), int(m.group(2)) / 1024) if m else (None, None)
    if r.returncode != 0:
        lines = [l for l in r.stderr.splitlines() if l.startswith("fastsim: error")]
        reason = lines[0] if lines else "exit %d" % r.returncode
        reason = re.sub(r"^fastsim: error: \S+: ", "", reason)
        return wall, mib, "refused: " + reason[:160]
    note = ""
    for line in r.stdout.splitlines():
        if line.startswith("simulated step:") or line.startswith("stage-level simulation:"):
            note += line.split(";")[0] + "; "
    return wall, mib, note.strip("; ")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fastsim", default=os.path.join(ROOT, "build", "fastsim"))
    ap.add_argument("--nodes", default="16,64,256,1024,4096")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--commands", default="plan,run")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="fastsim-scale-")
    print("| model | nodes | command | wall (s) | peak memory (MiB) | note |")
    print("|---|---|---|---|---|---|")
    for model in args.models.split(","):
        if model not in MODELS:
            sys.exit("unknown model %s (one of %s)" % (model, ", ".join(MODELS)))
        for nodes in (int(n) for n in args.nodes.split(",")):
            config = os.path.join(work, "%s_%d.yaml" % (model, nodes))
            with open(config, "w") as f:
                f.write(config_text(model, nodes))
            for command in args.commands.split(","):
                wall, mib, note = timed(args.fastsim, command, config,
                                        os.path.join(work, "%s_%d_%s" % (model, nodes, command)), args.timeout)
                print("| %s | %d | %s | %s | %s | %s |" % (model, nodes, command,
                                                          "—" if wall is None else "%.2f" % wall,
                                                          "—" if mib is None else "%.0f" % mib, note), flush=True)


if __name__ == "__main__":
    main()
