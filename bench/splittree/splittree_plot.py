#!/usr/bin/env python3
"""Draws the split-tree model figures from bench/splittree/splittree_model's JSON.

Reproduces the shapes of Figures 12-16 of Denis et al. (IJHPCA 2019,
Section 6.2) for every machine size N_proc in the JSON:

  fig12_levels_n<P>.png            F(N, i) per level i, N = 1..N_proc
  fig13_constant_comm_n<P>.png     C(N), T_blocking(N), T_non-blocking(S, N)
  fig14_constant_overlap_n<P>.png  blocking + C(N), T_overlapped(S, N), and
                                   the S the model chooses
  fig15_doubling_comm_n<P>.png     as Figure 13 for size-doubling operations
  fig16_doubling_overlap_n<P>.png  as Figure 14 for size-doubling operations

Usage: splittree_plot.py RESULTS.json OUT_DIR
Exits 0 with a message when matplotlib is missing (plots are optional).
"""
import json
import math
import os
import sys


def series_by_s(points, key, s):
    """The value for split s at each point; S > H(N) equals S = H(N) in the
    model (min(S, H(N))); None (infinite) becomes NaN, a gap in the line."""
    out = []
    for p in points:
        values = p[key]
        v = values[min(s, len(values) - 1)]
        out.append(float("nan") if v is None else v)
    return out


def comm_figure(plt, points, op, nproc, path, fig_no):
    ns = [p["N"] for p in points]
    h_max = points[-1]["H"]
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.plot(ns, [p["computation"] for p in points], "k--", label="C(N)")
    ax.plot(ns, [p["blocking"] for p in points], "k:", label="T_blocking(N)")
    for s in range(h_max + 1):
        ax.plot(ns, series_by_s(points, "nonblocking_by_S", s),
                label=f"T_non-blocking(S={s}, N)")
    top = 3 * max(points[-1]["blocking_plus_computation"], 1.0)
    ax.set_ylim(0, top)
    ax.set_xlim(1, nproc)
    ax.set_xlabel("N (MPI ranks on application cores)")
    ax.set_ylabel("time (buffer transfer units)")
    what = "constant-size buffer (broadcast, reduce)" if op == "constant" \
        else "doubling buffer (scatter, gather)"
    ax.set_title(f"Fig. {fig_no}: communication cost, {what}, "
                 f"N_proc = {nproc}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def overlap_figure(plt, points, op, nproc, path, fig_no):
    ns = [p["N"] for p in points]
    h_max = points[-1]["H"]
    fig, ax = plt.subplots(figsize=(8, 5))
    # Drawn last-but-one so it stays visible: for constant-size operations
    # it coincides with T_overlapped(S=H(N_proc)) (Eq. 7 with S = H(N)).
    ax.plot(ns, [p["blocking_plus_computation"] for p in points], "k--",
            label="blocking comm. + computation", zorder=5)
    for s in range(h_max + 1):
        ax.plot(ns, series_by_s(points, "overlapped_by_S", s),
                label=f"T_overlapped(S={s}, N)")
    ax.plot(ns, [p["model_time"] for p in points], "ko", markersize=3,
            label="chosen S (model minimum)")
    best = min(points, key=lambda p: p["model_time"])
    ax.annotate(f"min: N={best['N']}, S={best['S']}",
                (best["N"], best["model_time"]),
                xytext=(best["N"] - nproc * 0.45, best["model_time"] * 0.6),
                arrowprops={"arrowstyle": "->"}, fontsize=8)
    top = 3 * max(points[-1]["blocking_plus_computation"], 1.0)
    ax.set_ylim(0, top)
    ax.set_xlim(1, nproc)
    ax.set_xlabel("N (MPI ranks on application cores)")
    ax.set_ylabel("time (buffer transfer units)")
    what = "constant-size buffer" if op == "constant" else "doubling buffer"
    ax.set_title(f"Fig. {fig_no}: computation overlapped with nonblocking "
                 f"split-tree, {what}, N_proc = {nproc}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def levels_figure(plt, points, nproc, path):
    ns = [p["N"] for p in points]
    h_max = points[-1]["H"]
    fig, ax = plt.subplots(figsize=(8, 5))
    for i in range(1, h_max + 1):
        ys = [p["level_communications"][i - 1]
              if i <= len(p["level_communications"]) else float("nan")
              for p in points]
        ax.plot(ns, ys, drawstyle="steps-post", label=f"level i={i}")
    ax.set_xlim(1, nproc)
    ax.set_xlabel("N (MPI ranks)")
    ax.set_ylabel("F(N, i): communications in level i")
    ax.set_title(f"Fig. 12: communications per tree level, N = 1..{nproc}",
                 fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("splittree_plot: matplotlib is not installed (Debian: apt-get "
              "install python3-matplotlib); no plots written")
        return 0
    doc = json.load(open(argv[1]))
    out_dir = argv[2]
    os.makedirs(out_dir, exist_ok=True)
    groups = {}
    for r in doc["results"]:
        if r["case"].startswith("choice:"):
            groups.setdefault((r["op"], r["nproc"]), []).append(r)
    written = []
    for (op, nproc), points in sorted(groups.items()):
        points.sort(key=lambda p: p["N"])
        if not any(w.endswith(f"fig12_levels_n{nproc}.png") for w in written):
            path = os.path.join(out_dir, f"fig12_levels_n{nproc}.png")
            levels_figure(plt, points, nproc, path)
            written.append(path)
        comm_no, overlap_no = (13, 14) if op == "constant" else (15, 16)
        path = os.path.join(out_dir, f"fig{comm_no}_{op}_comm_n{nproc}.png")
        comm_figure(plt, points, op, nproc, path, comm_no)
        written.append(path)
        path = os.path.join(out_dir,
                            f"fig{overlap_no}_{op}_overlap_n{nproc}.png")
        overlap_figure(plt, points, op, nproc, path, overlap_no)
        written.append(path)
    for w in written:
        print(f"wrote {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
