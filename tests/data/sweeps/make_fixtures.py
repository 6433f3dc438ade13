#!/usr/bin/env python3
"""Regenerates the sweep-directory fixtures of `fastsim report` from real `fastsim run`s.

Usage: python3 tests/data/sweeps/make_fixtures.py build/fastsim

The directories follow the format of `fastsim sweep --out DIR` (docs/sweeps.md, docs/reports.md):
sweep.json, results.csv (result columns as summary.json has them, then "error") and
points/<id>/point.json. Only the failed points get a point.json here (the report reads nothing
else under points/), and their failures are injected by hand: the error texts carry <, & and
quotes so that tests see them escaped. The cluster sweep adds a column fastsim does not write
("note", quoted) and a plot hint with an empty series, as `plot: {x: ...}` gives.
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def g(v):
    return "%.9g" % v


def run(fastsim, config, overrides):
    with tempfile.TemporaryDirectory() as out:
        cmd = [fastsim, "run", config, "--out", out]
        for o in overrides:
            cmd += ["-p", o]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        with open(os.path.join(out, "layers.csv")) as f:
            layers = list(csv.DictReader(f))
        nodes = None
        if os.path.exists(os.path.join(out, "nodes.csv")):
            with open(os.path.join(out, "nodes.csv")) as f:
                nodes = list(csv.DictReader(f))
    return report, layers, nodes


NODE_RESULTS = ["cycles", "time_ms", "macs", "energy_uj", "pj_per_mac", "utilisation_percent", "array_cycles",
                "load_wait_cycles", "sram_stall_cycles", "drain_cycles", "dram_mbit", "energy_fmac_uj", "energy_converter_uj",
                "energy_sram_uj", "energy_dram_uj", "energy_leakage_uj"]
CLUSTER_RESULTS = ["step_ms", "planned_step_ms", "comm_mb_planned", "macs", "energy_uj", "pj_per_mac", "energy_fmac_uj",
                   "energy_converter_uj", "energy_sram_uj", "energy_dram_uj", "energy_leakage_uj", "energy_links_uj"]


def node_results(r, layers):
    e = r["energy_pj"]
    c = r["cycles"]
    dram_bits = sum(int(l["dram_read_bits"]) + int(l["dram_write_bits"]) for l in layers)
    return [str(r["total_cycles"]), g(r["total_seconds"] * 1e3), str(r["total_macs"]), g(r["total_energy_pj"] * 1e-6),
            g(r["pj_per_mac"]), g(r["utilisation_percent"]), str(c["array"]), str(c["load_wait"]), str(c["sram_stall"]),
            str(c["drain"]), g(dram_bits * 1e-6)] + [g(e[k] * 1e-6) for k in ("fmac", "converter", "sram", "dram", "leakage")]


def cluster_results(r, nodes):
    e = r["energy_pj"]
    macs = sum(int(n["macs"]) for n in nodes)
    return [g(r["simulated_step_s"] * 1e3), g(r["planned_step_s"] * 1e3), g(r["comm_bytes_planned"] * 1e-6), str(macs),
            g(e["total"] * 1e-6), g(e["total"] / macs)] + \
        [g(e[k] * 1e-6) for k in ("fmac", "converter", "sram", "dram", "leakage", "links")]


def write_sweep(name, sweep, header, rows, failures, values):
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "sweep.json"), "w") as f:
        json.dump(sweep, f, indent=2)
        f.write("\n")
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")  # quotes only cells with a comma or quote (RFC 4180)
    w.writerow(header)
    w.writerows(rows)
    with open(os.path.join(d, "results.csv"), "w") as f:
        f.write(text.getvalue())
    for point, error in failures.items():  # as fastsim sweep writes them (sim/sweep/point_record.cpp)
        os.makedirs(os.path.join(d, "points", point), exist_ok=True)
        with open(os.path.join(d, "points", point, "point.json"), "w") as f:
            json.dump({"point": point, "index": int(point[1:]), "status": "failed", "exit_status": 2, "signal": None,
                       "error": error, "wall_s": 0.0123, "base_config": sweep["base_config"], "values": values[point],
                       "overrides": ["%s=%s" % kv for kv in values[point].items()], "results": {}}, f, indent=2)
            f.write("\n")


def node_sweep(fastsim):
    config = os.path.join(ROOT, "configs", "quickstart.yaml")
    arrays, mantissas = [8, 16, 32, 64, 128], [2, 4, 6, 8]
    failures = {
        "p0017": 'fastsim: error: -p node.array.rows: 128 x 128 fMACs & "m=4" need > 1024 KiB of SRAM <injected>',
        "p0019": "killed after 600 s (timeout) <injected>",
    }
    keys = ["node.array.rows", "node.array.cols", "precision.weights", "precision.activations", "precision.gradients"]
    header = ["point"] + keys + ["status"] + NODE_RESULTS + ["error"]
    rows, n, point_values = [], 0, {}
    for a in arrays:
        for m in mantissas:
            point = "p%04d" % n
            n += 1
            values = [str(a), str(a), str(m), str(m), str(m)]
            point_values[point] = dict(zip(keys, values))
            if point in failures:
                rows.append([point] + values + ["failed"] + [""] * len(NODE_RESULTS) + [failures[point]])
                continue
            report, layers, _ = run(fastsim, config, ["%s=%s" % kv for kv in zip(keys, values)])
            rows.append([point] + values + ["ok"] + node_results(report, layers) + [""])
    sweep = {"format": "fastsim-sweep/1", "name": "array_precision_resnet18", "sweep_file": "/work/sweeps/array_precision.yaml",
             "base_config": "/work/configs/quickstart.yaml", "fingerprint": "3f9a0c1d2b7e4a65", "points": n,
             "axes": [{"name": "array", "keys": keys[:2]}, {"name": "mantissa", "keys": keys[2:]}],
             "plot": {"x": "node.array.rows", "series": "precision.weights"}}
    write_sweep("resnet18_array_precision", sweep, header, rows, failures, point_values)


def cluster_sweep(fastsim):
    config = os.path.join(ROOT, "configs", "tests", "tiny_cluster.yaml")
    planners, batches = ["data_parallel", "owt", "hypar", "accpar", "tofu"], [8, 16]
    keys = ["planner.name", "workload.batch"]
    # An extra column the report does not know, with a comma (so quoted), to test tolerance.
    header = ["point"] + keys + ["status"] + CLUSTER_RESULTS + ["error", "note"]
    rows, n = [], 0
    for p in planners:
        for b in batches:
            point = "p%04d" % n
            n += 1
            report, _, nodes = run(fastsim, config, ["planner.name=" + p, "workload.batch=%d" % b])
            rows.append([point, p, str(b), "ok"] + cluster_results(report, nodes) + ["", "%s, batch %d" % (p, b)])
    sweep = {"format": "fastsim-sweep/1", "name": "tiny_cluster_planners", "sweep_file": "/work/sweeps/planners.yaml",
             "base_config": "/work/configs/tests/tiny_cluster.yaml", "fingerprint": "00c0ffee12345678", "points": n,
             "axes": [{"name": "planner", "keys": ["planner.name"]}, {"name": "batch", "keys": ["workload.batch"]}],
             "plot": {"x": "planner.name", "series": ""}}
    write_sweep("tiny_cluster_planners", sweep, header, rows, {}, {})


if __name__ == "__main__":
    node_sweep(sys.argv[1])
    cluster_sweep(sys.argv[1])
