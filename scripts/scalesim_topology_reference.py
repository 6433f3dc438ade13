#!/usr/bin/python3
"""What SCALE-Sim v2's own topology parser makes of every topology file it ships.

Usage: /usr/bin/python3 scripts/scalesim_topology_reference.py SCALESIM_CLONE > reference.tsv

Loads each topologies/**/*.csv with scalesim/topology_utils.py (imported from the clone by path,
so no numpy is needed) the way SCALE-Sim's CLI does: `-i gemm` for files whose header names the
GEMM columns (Layer, M, N, K), `-i conv` for the rest. Prints one row per file: its path under
topologies/, the form, `ok` or the exception SCALE-Sim raised, SCALE-Sim's layer count and its
total MACs (topologies.get_all_mac_ops). tests/data/scalesim/reference.tsv is this output at
SCALE-Sim commit 22f88b1; tests/unit/test_scalesim_topology.cpp checks fastsim against it.
"""
import importlib.util
import pathlib
import sys


def main():
    clone = pathlib.Path(sys.argv[1])
    spec = importlib.util.spec_from_file_location("topology_utils", clone / "scalesim" / "topology_utils.py")
    topology_utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(topology_utils)
    root = clone / "topologies"
    print("file\tform\tstatus\tlayers\tmacs")
    for path in sorted(root.rglob("*.csv")):
        first = path.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
        names = [f.strip().lower() for f in first.lstrip("\ufeff").split(",")]
        form = "gemm" if names[1:4] == ["m", "n", "k"] else "conv"
        topo = topology_utils.topologies()
        try:
            topo.load_arrays(topofile=str(path), mnk_inputs=(form == "gemm"))
            topo.topo_calc_hyperparams()
            status, layers, macs = "ok", topo.get_num_layers(), topo.get_all_mac_ops()
        except Exception as e:  # SCALE-Sim cannot read this file
            status, layers, macs = type(e).__name__, 0, 0
        print(f"{path.relative_to(root)}\t{form}\t{status}\t{layers}\t{macs}")


if __name__ == "__main__":
    main()
