#!/usr/bin/env python3
"""Draws the heat-maps of the overlap methodology paper (Denis et al.,
"A methodology for assessing computation/communication overlap of MPI
nonblocking collectives", Section 5.2 "Metrics Display", Figures 6-9).

Usage:
  overlap_plot.py --csv RESULTS.csv [--impact-csv IMPACT.csv] --out-dir DIR
                  [--title-prefix TEXT]

RESULTS.csv columns: library,config,collective,comm_target_us,comp_target_us,
comm_us,comp_us,measured_us,overhead_ratio,comm_ratio,comp_slowdown,valid
IMPACT.csv columns: library,config,ratio (t_comp_passive_mpi / t_comp_ref).

Writes, in DIR:
  overhead_<lib>_<config>_<coll>.png     r_overhead heat-map (comm x, comp y)
  concurrency_<lib>_<config>_<coll>.png  r_comm (left), r_comp_slowdown (right)
  overview_overhead.png                  rows lib:config, columns collectives
  mpi_impact.png                         r_MPI_impact bars (with --impact-csv)
Cells: missing = light grey, empty; valid = 0 (calibration did not converge)
= grey, hatched, "invalid"; NaN value = grey, "nan". Exits 2 on a bad CSV.
"""
import argparse
import csv
import math
import os
import re
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import LinearSegmentedColormap, Normalize  # noqa: E402
from matplotlib.ticker import PercentFormatter  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

RESULT_COLUMNS = ["library", "config", "collective", "comm_target_us",
                  "comp_target_us", "comm_us", "comp_us", "measured_us",
                  "overhead_ratio", "comm_ratio", "comp_slowdown", "valid"]
IMPACT_COLUMNS = ["library", "config", "ratio"]
DPI = 110
MISSING_COLOR = "#e6e6e6"
BAD_COLOR = "#a0a0a0"


class CsvError(Exception):
    """A missing or malformed input CSV (reported with exit status 2)."""


def parse_float(text, path, line, column, allow_nan=True):
    """The float in text; empty/"nan" is NaN when allow_nan, else CsvError."""
    text = (text or "").strip()
    try:
        value = float(text) if text else float("nan")
    except ValueError:
        raise CsvError(f"{path}:{line}: column {column}: not a number: "
                       f"{text!r}")
    if not allow_nan and not math.isfinite(value):
        raise CsvError(f"{path}:{line}: column {column}: not a finite number: "
                       f"{text!r}")
    return value


def read_csv(path, columns):
    """The rows of path as (line number, dict); CsvError if it cannot be read,
    lacks one of columns or has no data row."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            header = [h.strip() for h in (reader.fieldnames or [])]
            missing = [c for c in columns if c not in header]
            if missing:
                raise CsvError(f"{path}: missing column(s): "
                               f"{', '.join(missing)} (header: "
                               f"{','.join(header) or 'none'})")
            reader.fieldnames = header
            rows = [(reader.line_num, r) for r in reader]
    except OSError as e:
        raise CsvError(f"cannot read {path}: {e.strerror}")
    if not rows:
        raise CsvError(f"{path}: no data rows")
    return rows


def read_results(path):
    """Parsed RESULTS.csv rows: dicts with str keys library/config/collective,
    float targets and ratios, bool valid."""
    out = []
    for line, r in read_csv(path, RESULT_COLUMNS):
        row = {k: (r[k] or "").strip()
               for k in ("library", "config", "collective")}
        for k in ("comm_target_us", "comp_target_us"):
            row[k] = parse_float(r[k], path, line, k, allow_nan=False)
            if row[k] <= 0:
                raise CsvError(f"{path}:{line}: column {k}: not positive: "
                               f"{r[k]!r}")
        for k in ("comm_us", "comp_us", "measured_us", "overhead_ratio",
                  "comm_ratio", "comp_slowdown"):
            row[k] = parse_float(r[k], path, line, k)
        valid = (r["valid"] or "").strip().lower()
        if valid not in ("0", "1", "true", "false"):
            raise CsvError(f"{path}:{line}: column valid: expected 1 or 0, "
                           f"got {r['valid']!r}")
        row["valid"] = valid in ("1", "true")
        out.append(row)
    return out


def format_us(us):
    """A target time in readable units: "100 us", "3.2 ms", "1 s"."""
    for unit, scale in (("s", 1e6), ("ms", 1e3), ("us", 1.0)):
        if abs(us) >= scale or unit == "us":
            v = us / scale
            text = (f"{v:.0f}" if abs(v) >= 10
                    else f"{v:.1f}".rstrip("0").rstrip("."))
            return f"{text} {unit}"


def build_grid(rows, key):
    """(xs, ys, values, state) for one library/config/collective: xs/ys the
    sorted comm/comp targets, values[y][x] the key column, state[y][x] 0 for
    a missing cell, 1 valid, 2 invalid (the last row wins on duplicates)."""
    xs = sorted({r["comm_target_us"] for r in rows})
    ys = sorted({r["comp_target_us"] for r in rows})
    values = np.full((len(ys), len(xs)), np.nan)
    state = np.zeros((len(ys), len(xs)), dtype=int)
    for r in rows:
        j, i = ys.index(r["comp_target_us"]), xs.index(r["comm_target_us"])
        values[j, i] = r[key]
        state[j, i] = 1 if r["valid"] else 2
    return xs, ys, values, state


def draw_heatmap(ax, grid, cmap, norm, fmt, fontsize, ticks=True):
    """Draws grid (from build_grid) on ax with values fmt(v) in each cell and
    the comm = comp diagonal; returns the image for a colour bar."""
    xs, ys, values, state = grid
    shown = np.ma.masked_where((state != 1) | ~np.isfinite(values), values)
    ax.set_facecolor(MISSING_COLOR)
    image = ax.imshow(shown, cmap=cmap, norm=norm, origin="lower",
                      aspect="auto", interpolation="nearest")
    for (j, i), st in np.ndenumerate(state):
        v = values[j, i]
        if st == 0:
            continue
        if st == 2 or not math.isfinite(v):
            ax.add_patch(Rectangle((i - 0.5, j - 0.5), 1, 1, lw=0.5,
                                   facecolor=BAD_COLOR, edgecolor="#606060",
                                   hatch="///" if st == 2 else None))
            ax.text(i, j, "invalid" if st == 2 else "nan", ha="center",
                    va="center", fontsize=fontsize, color="black",
                    bbox=dict(facecolor=BAD_COLOR, edgecolor="none", pad=0.5)
                    if st == 2 else None)
            continue
        r, g, b, _ = cmap(norm(v))
        dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.45
        ax.text(i, j, fmt(v), ha="center", va="center", fontsize=fontsize,
                color="white" if dark else "black")
    # comm = comp: each time's position on both axes, interpolated in log.
    common = sorted(v for v in set(xs) | set(ys)
                    if max(xs[0], ys[0]) <= v <= min(xs[-1], ys[-1]))
    if len(common) >= 2 and len(xs) >= 2 and len(ys) >= 2:
        lx, ly = np.log(xs), np.log(ys)
        px = np.interp(np.log(common), lx, np.arange(len(xs)))
        py = np.interp(np.log(common), ly, np.arange(len(ys)))
        ax.plot(px, py, ls="--", color="black", lw=0.8, alpha=0.6)
    ax.set_xlim(-0.5, len(xs) - 0.5)
    ax.set_ylim(-0.5, len(ys) - 0.5)
    ax.set_xticks(range(len(xs)))
    ax.set_yticks(range(len(ys)))
    ax.set_xticklabels([format_us(x) for x in xs] if ticks else [],
                       rotation=30 if len(xs) > 5 else 0,
                       fontsize=fontsize + 1)
    ax.set_yticklabels([format_us(y) for y in ys] if ticks else [],
                       fontsize=fontsize + 1)
    return image


def colormaps():
    """The paper's colour scales as {name: (cmap, norm)}."""
    overhead = LinearSegmentedColormap.from_list(
        "overhead", [(0.0, "#2b5cd6"), (1 / 3, "#1a9641"), (2 / 3, "#ffe629"),
                     (1.0, "#d7191c")])
    bwr = LinearSegmentedColormap.from_list(
        "blue_white_red",
        [(0.0, "#2b5cd6"), (0.5, "#ffffff"), (1.0, "#d7191c")])
    return {"overhead": (overhead, Normalize(-1.0, 2.0)),
            "comm_ratio": (bwr, Normalize(0.0, 2.0)),
            "comp_slowdown": (bwr, Normalize(1.0, 2.0))}


def annotation_size(grid, base):
    """A cell font size shrinking with the larger grid dimension."""
    return max(4.5, min(base, base * 6 / max(len(grid[0]), len(grid[1]), 1)))


WRITTEN = []     # every figure written, for the closing line
VERBOSE = False  # --verbose: one line per figure


def safe(name):
    """name usable in a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "_"


def save(fig, out_dir, name):
    """Writes fig to out_dir/name, closes it and reports it."""
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    WRITTEN.append(path)
    if VERBOSE:
        print(f"wrote {path}")


def pct(v):
    """A ratio as a percentage: 0.37 -> "37%"."""
    return f"{v * 100:.0f}%"


def label_axes(ax):
    """The axis labels of every heat-map."""
    ax.set_xlabel("communication time (target)")
    ax.set_ylabel("computation time (target)")


def plot_single(key, rows, maps, prefix, out_dir):
    """overhead_*.png and concurrency_*.png for one (lib, config, coll)."""
    lib, config, coll = key
    head = f"{prefix} {lib} {config}".strip()
    stem = "_".join(safe(k) for k in key)
    grid = build_grid(rows, "overhead_ratio")
    nx, ny = len(grid[0]), len(grid[1])
    fs = annotation_size(grid, 10)
    fig, ax = plt.subplots(figsize=(max(6.5, 0.9 * nx + 3),
                                    max(5, 0.75 * ny + 2)))
    image = draw_heatmap(ax, grid, *maps["overhead"], lambda v: f"{v:.2f}", fs)
    cbar = fig.colorbar(image, ax=ax, extend="both")
    cbar.set_label("overhead ratio (0 perfect overlap, 1 serialized)")
    label_axes(ax)
    ax.set_title(f"{head}: {coll} overhead ratio")
    save(fig, out_dir, f"overhead_{stem}.png")

    fig, axes = plt.subplots(1, 2, figsize=(2 * max(6, 0.9 * nx + 2.5),
                                            max(5, 0.75 * ny + 2)),
                             layout="constrained")
    for ax, column, what, extend in (
            (axes[0], "comm_ratio", "r_comm = (t_call + t_wait) / t_comm_ref",
             "max"),
            (axes[1], "comp_slowdown", "r_comp_slowdown = t_comp / t_comp_ref",
             "both")):
        image = draw_heatmap(ax, build_grid(rows, column), *maps[column],
                             pct, fs)
        cbar = fig.colorbar(image, ax=ax, extend=extend,
                            format=PercentFormatter(1.0))
        cbar.set_label(what.split(" =")[0])
        label_axes(ax)
        ax.set_title(what, fontsize=11)
    fig.suptitle(f"{head}: {coll} concurrency ratios")
    save(fig, out_dir, f"concurrency_{stem}.png")


def plot_overview(groups, maps, prefix, out_dir):
    """overview_overhead.png: rows library:config, columns collectives."""
    pairs = list(dict.fromkeys((k[0], k[1]) for k in groups))
    colls = list(dict.fromkeys(k[2] for k in groups))
    fig, axes = plt.subplots(len(pairs), len(colls), squeeze=False,
                             figsize=(3.4 * len(colls) + 1.5,
                                      2.9 * len(pairs) + 1),
                             layout="constrained")
    image = None
    for (r, (lib, config)), (c, coll) in (
            (rc, cc) for rc in enumerate(pairs) for cc in enumerate(colls)):
        ax = axes[r][c]
        rows = groups.get((lib, config, coll))
        if rows is None:
            ax.set_facecolor(MISSING_COLOR)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.text(0.5, 0.5, "no data", ha="center", va="center",
                    transform=ax.transAxes, fontsize=8)
        else:
            grid = build_grid(rows, "overhead_ratio")
            image = draw_heatmap(ax, grid, *maps["overhead"],
                                 lambda v: f"{v:.2f}",
                                 annotation_size(grid, 6.5))
        if r == 0:
            ax.set_title(coll, fontsize=11)
        if c == 0:
            ax.set_ylabel(f"{lib}:{config}\ncomputation (target)", fontsize=9)
        if r == len(pairs) - 1:
            ax.set_xlabel("communication (target)", fontsize=9)
    cbar = fig.colorbar(image, ax=axes, extend="both", shrink=0.7, aspect=30)
    cbar.set_label("overhead ratio (0 perfect overlap, 1 serialized)")
    title = f"{prefix} overhead ratio: library:config (rows) x collective"
    fig.suptitle(f"{title} (columns)".strip(), fontsize=13)
    save(fig, out_dir, "overview_overhead.png")


def read_impact(path):
    """IMPACT.csv as {"library:config": [ratio, ...]} in CSV order."""
    values = {}
    for line, r in read_csv(path, IMPACT_COLUMNS):
        key = f"{(r['library'] or '').strip()}:{(r['config'] or '').strip()}"
        values.setdefault(key, []).append(
            parse_float(r["ratio"], path, line, "ratio"))
    return values


def plot_impact(values, prefix, out_dir):
    """mpi_impact.png: r_MPI_impact per library:config (mean of duplicate
    rows, n shown), red line at 1 = no impact (paper Figure 9)."""
    labels = [k if len(v) == 1 else f"{k}\n(mean of {len(v)})"
              for k, v in values.items()]
    means = [float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")
             for v in values.values()]
    fig, ax = plt.subplots(figsize=(max(5, 1.3 * len(labels) + 2), 4.5))
    bars = ax.bar(range(len(means)), np.nan_to_num(means), color="#4a7fc1",
                  width=0.6)
    for bar, m in zip(bars, means):
        ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height(),
                f"{m:.2f}", ha="center", va="bottom", fontsize=10)
    ax.axhline(1.0, color="red", lw=1.5, label="no impact (1)")
    finite = [m for m in means if math.isfinite(m)]
    ax.set_ylim(0, max([1.2] + [1.15 * m for m in finite]))
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=9)
    ax.set_ylabel("r_MPI_impact = t_comp_passive_mpi / t_comp_ref")
    ax.set_title(f"{prefix} MPI impact on computation".strip())
    ax.legend(loc="lower right")
    save(fig, out_dir, "mpi_impact.png")


def main(argv=None):
    """Parses the arguments, reads the CSVs and writes every figure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", required=True, help="overlap results CSV")
    parser.add_argument("--impact-csv", help="MPI impact ratio CSV")
    parser.add_argument("--out-dir", required=True, help="output directory")
    parser.add_argument("--title-prefix", default="", help="title prefix")
    parser.add_argument("--verbose", action="store_true",
                        help="one line per figure written")
    args = parser.parse_args(argv)
    global VERBOSE
    VERBOSE = args.verbose
    try:
        results = read_results(args.csv)
        impact = read_impact(args.impact_csv) if args.impact_csv else None
        os.makedirs(args.out_dir, exist_ok=True)
        groups = {}
        for row in results:
            key = (row["library"], row["config"], row["collective"])
            groups.setdefault(key, []).append(row)
        maps = colormaps()
        for key, rows in groups.items():
            plot_single(key, rows, maps, args.title_prefix, args.out_dir)
        plot_overview(groups, maps, args.title_prefix, args.out_dir)
        if impact is not None:
            plot_impact(impact, args.title_prefix, args.out_dir)
        print(f"wrote {len(WRITTEN)} figures in {args.out_dir} "
              "(overview_overhead.png first)")
    except CsvError as e:
        print(f"overlap_plot.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
