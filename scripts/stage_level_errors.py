#!/usr/bin/env python3
"""The stage-level simulation against the message-level one, on the same pipeline plans.

    python3 scripts/stage_level_errors.py [--random N] [--seed S] [--max-nodes M] [--fastsim PATH]
                                          [CONFIG ...]

For each config (the given ones, and N random clusters drawn by scripts/random_clusters.py) and
each pipeline planner (`pipeline`, `alpa`): plans once at the message level (`fastsim plan
--out`), runs that plan (`fastsim run --plan`) under cluster.pipeline_simulation message_level
(every message on the SystemC executor) and stage_level (docs/pipeline.md, "Stage-level
simulation"), and prints each simulated step, their difference (stage - message) / message, and
the distribution of |difference|. The message level is the reference: the stage level is what
runs when a pipeline's step is too large for it.
"""
import argparse, os, re, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import random_clusters  # noqa: E402

STEP = re.compile(r"simulated step: ([0-9.]+) ms")


def step_ms(fastsim, config, plan, level):
    out = subprocess.run([fastsim, "run", config, "--plan", plan, "--max-work", "100000", "-p",
                          "cluster.pipeline_simulation=" + level], capture_output=True, text=True)
    m = STEP.search(out.stdout)
    if out.returncode != 0 or not m:
        raise RuntimeError("%s (%s): %s" % (config, level, (out.stderr or out.stdout).strip()[-300:]))
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("configs", nargs="*")
    ap.add_argument("--random", type=int, default=0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--max-nodes", type=int, default=256)
    ap.add_argument("--fastsim", default=os.path.join(ROOT, "build/fastsim"))
    args = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="stage_level.")
    configs = list(args.configs)
    if args.random:
        configs += [p for p, _, _ in random_clusters.generate(args.random, scratch, args.seed, args.max_nodes)]
    errors = []
    print("| config | planner | message_level ms | stage_level ms | difference |")
    print("|---|---|---|---|---|")
    for config in configs:
        for planner in ("pipeline", "alpa"):
            out = os.path.join(scratch, "%s.%s" % (os.path.basename(config), planner))
            planned = subprocess.run([args.fastsim, "plan", config, "--planner", planner, "--out", out, "--force",
                                      "--max-work", "100000", "-p", "cluster.pipeline_simulation=message_level"],
                                     capture_output=True, text=True)
            if planned.returncode != 0:
                print("| %s | %s | not planned: %s | | |" % (os.path.basename(config), planner,
                                                             planned.stderr.strip().splitlines()[-1][:120]))
                continue
            plan = os.path.join(out, "plan.json")
            try:
                message, stage = (step_ms(args.fastsim, config, plan, level)
                                  for level in ("message_level", "stage_level"))
            except RuntimeError as e:
                print("| %s | %s | failed: %s | | |" % (os.path.basename(config), planner, str(e)[:160]))
                continue
            diff = 100.0 * (stage - message) / message
            errors.append(abs(diff))
            print("| %s | %s | %.3f | %.3f | %+.2f%% |" % (os.path.basename(config), planner, message, stage, diff),
                  flush=True)
    if errors:
        errors.sort()
        print("\n%d plans: |difference| median %.2f%%, p90 %.2f%%, max %.2f%%; within 5%%: %d of %d" % (
            len(errors), statistics.median(errors), errors[min(len(errors) - 1, int(0.9 * len(errors)))],
            errors[-1], sum(e <= 5 for e in errors), len(errors)))


if __name__ == "__main__":
    main()
