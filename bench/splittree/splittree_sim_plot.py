#!/usr/bin/env python3
"""Draws the folded-collective simulator's figures from bench/splittree/splittree_sim's
JSON (SIMULATED times, not measurements; see docs/splittree_sim.md):

  sim_fig7_iscan.png           chain Iscan, bind / numa / odd-even: simulated
                               bars beside the paper's ratios to bind
  sim_fig17_ibcast_n64.png     split-tree Ibcast (KNL 64), S = 0..3, blocking,
                               simulated (solid) and model (dashed) curves
  sim_fig18_ireduce_n64.png    split-tree Ireduce (KNL 64), the same
  sim_fig19_ireduce_n48.png    split-tree Ireduce (Skylake 48), the same

Usage: splittree_sim_plot.py RESULTS.json OUT_DIR
Exits 0 with a message when matplotlib is missing (plots are optional).
"""
import json
import os
import sys

# The paper's colours for S = 0..3 (Figures 17-19: blue, orange, purple,
# green).
S_COLOURS = ["tab:blue", "tab:orange", "tab:purple", "tab:green",
             "tab:red", "tab:brown", "tab:pink"]


def figure7(plt, cases, path):
    order = ["bind", "numa", "odd-even"]
    by = {c["placement"]: c for c in cases}
    present = [p for p in order if p in by]
    if not present:
        return False
    bind = by.get("bind", by[present[0]])
    sim = [by[p]["units"] for p in present]
    paper = [by[p]["paper_ratio_to_bind"] * bind["units"] for p in present]
    fig, ax = plt.subplots(figsize=(7, 4.8))
    x = range(len(present))
    ax.bar([i - 0.2 for i in x], sim, width=0.4, color="tab:blue",
           label="simulated (foldsim)")
    ax.bar([i + 0.2 for i in x], paper, width=0.4, color="none",
           edgecolor="tab:gray", hatch="//",
           label="paper's ratio to bind x simulated bind")
    for i, p in enumerate(present):
        c = by[p]
        ax.annotate(f"{c['ratio_to_bind']:.2f}x bind\n(paper ~{c['paper_ratio_to_bind']:g}x)",
                    (i - 0.2, sim[i]), xytext=(0, 4),
                    textcoords="offset points", ha="center", fontsize=8)
        ax.annotate("overlappable" if c["overlappable"] else "not overlappable",
                    (i, 0), xytext=(0, -28), textcoords="offset points",
                    ha="center", fontsize=8, color="tab:gray")
    ax.set_xticks(list(x))
    ax.set_xticklabels(present)
    ax.set_ylim(0, max(sim + paper) * 1.2)
    ax.set_ylabel(f"simulated time (units of one {bind['bytes']}-byte copy)")
    ax.set_title(f"Fig. 7, SIMULATED: chain Iscan, {bind['N']} ranks on "
                 f"{bind['nproc']} cores (KNL topology), {bind['bytes']} B",
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def split_figure(plt, fig_no, points, blocking, best, path):
    points.sort(key=lambda p: (p["S"], p["N"]))
    blocking.sort(key=lambda p: p["N"])
    best.sort(key=lambda p: p["N"])
    first = blocking[0]
    op, nproc, machine = first["op"], first["nproc"], first["machine"]
    fig, ax = plt.subplots(figsize=(12, 5.8))
    ns = [b["N"] for b in blocking]
    ax.plot(ns, [b["units"] for b in blocking], "k-", marker=".",
            label="Comp + blocking (simulated)")
    ax.plot(ns, [b["model_scaled_units"] for b in blocking], "k--",
            label="Comp + blocking (model, scaled)")
    s_values = sorted({p["S"] for p in points})
    for s in s_values:
        row = [p for p in points if p["S"] == s]
        colour = S_COLOURS[s % len(S_COLOURS)]
        ax.plot([p["N"] for p in row], [p["units"] for p in row], "-",
                color=colour, marker=".",
                label=f"Comp + comms, split-tree (S={s}) (simulated)")
        ax.plot([p["N"] for p in row], [p["model_scaled_units"] for p in row],
                "--", color=colour, alpha=0.8,
                label=f"model (S={s}), scaled")
    shared = [b["N"] for b in blocking if b.get("shared_app_core_ranks", 0)]
    if shared:
        for n in shared:
            ax.axvspan(n - 0.5, n + 0.5, color="0.9", zorder=0)
        ax.plot([], [], "s", color="0.9",
                label="two ranks share an app core (placement)")
    top = 2.2 * max(b["units"] for b in blocking)
    ax.set_ylim(0, top)
    ax.set_xlim(min(ns) - 0.5, max(ns) + 0.5)
    ax.set_xlabel("N (MPI ranks on application cores; "
                  f"P = {nproc} - N communication cores)")
    ax.set_ylabel("simulated time (units of one buffer copy)")

    def switches(key):
        out, prev = [], None
        for b in best:
            if b[key] != prev:
                out.append(f"S={b[key]}@{b['N']}")
            prev = b[key]
        return " ".join(out)

    ax.text(0.01, 0.02,
            f"best S, simulated: {switches('S_sim')}\n"
            f"best S, model:     {switches('S_model')}",
            transform=ax.transAxes, va="bottom", fontsize=8,
            family="monospace",
            bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "0.8"})
    ax.set_title(f"Fig. {fig_no}, SIMULATED: split-tree I{op}, "
                 f"{first['bytes'] / 2**20:g} MiB, "
                 f"{machine} topology ({nproc} cores); model dashed",
                 fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
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
        print("splittree_sim_plot: matplotlib is not installed (Debian: "
              "apt-get install python3-matplotlib); no plots written")
        return 0
    doc = json.load(open(argv[1]))
    out_dir = argv[2]
    os.makedirs(out_dir, exist_ok=True)
    iscan, split, blocking, best = [], {}, {}, {}
    for r in doc["results"]:
        kind = r["case"].split(":")[0]
        if kind == "iscan":
            iscan.append(r)
        elif kind in ("split", "blocking", "best"):
            key = (r["figure"], r["op"], r["nproc"])
            {"split": split, "blocking": blocking, "best": best}[kind] \
                .setdefault(key, []).append(r)
    written = []
    path = os.path.join(out_dir, "sim_fig7_iscan.png")
    if iscan and figure7(plt, iscan, path):
        written.append(path)
    for key in sorted(blocking):
        fig_no, op, nproc = key
        path = os.path.join(out_dir, f"sim_fig{fig_no}_i{op}_n{nproc}.png")
        split_figure(plt, fig_no, split.get(key, []), blocking[key],
                     best.get(key, []), path)
        written.append(path)
    for w in written:
        print(f"wrote {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
