#!/usr/bin/env python3
"""Draws the heat-maps of the overlap methodology paper (Denis et al.,
"A methodology for assessing computation/communication overlap of MPI
nonblocking collectives", Section 5.2 "Metrics Display", Figures 6-9).

Usage:
  overlap_plot.py --csv RESULTS.csv [--impact-csv IMPACT.csv] --out-dir DIR
                  [--title-prefix TEXT] [--compare LIB:CONFIG,...]
                  [--min-bytes B] [--verbose]

RESULTS.csv columns: library,config,collective,comm_target_us,comp_target_us,
comm_us,comp_us,measured_us,overhead_ratio,comm_ratio,comp_slowdown,valid
and, optionally, bytes (message size per block, an integer), significant
(1, 0 or empty: a valid cell with 0 has an overhead ratio whose repetitions
are too noisy for its denominator, so its value is not drawn), ci_low and
ci_high (the 95% confidence interval of the overhead ratio, empty when
unknown).
IMPACT.csv columns: library,config,ratio (t_comp_passive_mpi / t_comp_ref)
and, optionally, ratio_worst and worst_rank (the rank computing slowest).

Writes, in DIR:
  overhead_<lib>_<config>_<coll>.png     r_overhead heat-map (comm x, comp y)
  concurrency_<lib>_<config>_<coll>.png  r_comm (left), r_comp_slowdown (right)
  overview_overhead.png                  rows lib:config, columns collectives
  mpi_impact.png                         r_MPI_impact bars (with --impact-csv;
                                         a hatched "worst rank" bar beside
                                         each when ratio_worst is given)
  compare_<coll>.png                     with --compare: one overhead
                                         heat-map per KEY side by side, each
                                         titled with the median of its
                                         significant diagonal cells
  compare_all.png                        with --compare: rows collectives,
                                         columns KEYS
Cells: missing = light grey, empty; valid = 0 (calibration did not converge)
= grey, hatched "///", "invalid"; not significant = light grey, hatched
"\\\\", "n.s." (its CI below in the per-configuration heat-maps), never
coloured by its value; NaN value = grey, "nan". Cells whose bytes are under
--min-bytes are faded: they are outside the summary (the diagonal medians).
The significance flag is the overhead ratio's; the concurrency heat-maps
(other ratios, other denominators) keep their values.
The diagonal: cells whose communication and computation targets are within
3x of each other (bench/overlap/overlap_driver.cc's summary).
Exits 2 with a message naming the file, line and column on a bad CSV, and
on a bad --compare or --min-bytes.
"""
import argparse
import csv
import math
import os
import re
import sys
import textwrap

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import LinearSegmentedColormap, Normalize  # noqa: E402
from matplotlib.ticker import PercentFormatter  # noqa: E402
from matplotlib.patches import Patch, Rectangle  # noqa: E402

RESULT_COLUMNS = ["library", "config", "collective", "comm_target_us",
                  "comp_target_us", "comm_us", "comp_us", "measured_us",
                  "overhead_ratio", "comm_ratio", "comp_slowdown", "valid"]
IMPACT_COLUMNS = ["library", "config", "ratio"]
DPI = 110
MISSING_COLOR = "#e6e6e6"
BAD_COLOR = "#a0a0a0"
NS_COLOR = "#cfcfcf"
NS_HATCH = "\\\\\\"
FADED_ALPHA = 0.6       # white veil over a cell outside the summary
DIAGONAL_FACTOR = 3.0   # bench/overlap/overlap_driver.cc's kDiagonalFactor

# Cell states in Grid.state.
MISSING, VALID, INVALID, NOT_SIGNIFICANT = 0, 1, 2, 3


class CsvError(Exception):
    """A missing or malformed input (reported with exit status 2)."""


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


def parse_count(text, path, line, column):
    """The non-negative integer in text, None when empty; else CsvError."""
    text = (text or "").strip()
    if not text:
        return None
    if not re.fullmatch(r"\+?[0-9]+", text):
        raise CsvError(f"{path}:{line}: column {column}: expected a "
                       f"non-negative integer or empty, got {text!r}")
    return int(text)


def read_csv(path, columns):
    """(header, rows) of path, rows as (line number, dict); CsvError if it
    cannot be read, lacks one of columns or has no data row."""
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
    except csv.Error as e:
        raise CsvError(f"{path}: not a CSV file: {e}")
    except UnicodeDecodeError:
        raise CsvError(f"{path}: not a text CSV file")
    if not rows:
        raise CsvError(f"{path}: no data rows")
    return header, rows


def read_results(path):
    """(rows, has_bytes): parsed RESULTS.csv rows, dicts with str keys
    library/config/collective, float targets and ratios, bool valid,
    bytes (int or None), significant (True, False or None = unknown),
    ci_low/ci_high (NaN when unknown); has_bytes when the bytes column is
    there."""
    header, rows = read_csv(path, RESULT_COLUMNS)
    out = []
    for line, r in rows:
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
        row["bytes"] = parse_count(r.get("bytes"), path, line, "bytes")
        significant = (r.get("significant") or "").strip()
        if significant not in ("", "0", "1"):
            raise CsvError(f"{path}:{line}: column significant: expected 1, "
                           f"0 or empty, got {r['significant']!r}")
        row["significant"] = (None if not significant
                              else significant == "1")
        for k in ("ci_low", "ci_high"):
            row[k] = parse_float(r.get(k), path, line, k)
        lo, hi = row["ci_low"], row["ci_high"]
        if math.isnan(lo) != math.isnan(hi):
            given, empty = ("ci_low", "ci_high") if math.isnan(hi) else (
                "ci_high", "ci_low")
            raise CsvError(f"{path}:{line}: column {empty}: empty while "
                           f"{given} is {r[given].strip()!r} (give both or "
                           "neither)")
        if lo > hi:
            raise CsvError(f"{path}:{line}: column ci_low: {r['ci_low']!r} "
                           f"is above ci_high {r['ci_high']!r}")
        out.append(row)
    return out, "bytes" in header


def format_us(us):
    """A target time in readable units: "100 us", "3.2 ms", "1 s"."""
    for unit, scale in (("s", 1e6), ("ms", 1e3), ("us", 1.0)):
        if abs(us) >= scale or unit == "us":
            v = us / scale
            text = (f"{v:.0f}" if abs(v) >= 10
                    else f"{v:.1f}".rstrip("0").rstrip("."))
            return f"{text} {unit}"


def format_bytes(n):
    """A size in binary units: 1048576 -> "1 MiB", 1536 -> "1.5 KiB"."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{n} B"


def format_ci(lo, hi):
    """A confidence interval in a cell: "[-0.8, 2.1]"."""
    def one(v):
        if not math.isfinite(v):
            return "-inf" if v < 0 else "inf"
        return f"{v:.2f}" if abs(v) < 1 else f"{v:.1f}"
    return f"[{one(lo)}, {one(hi)}]"


class Grid:
    """One library/config/collective's cells on the comm x comp target grid:
    xs/ys the sorted comm/comp targets, values[y][x] the drawn column,
    state[y][x] MISSING/VALID/INVALID/NOT_SIGNIFICANT, faded[y][x] the
    cells outside the summary, ci_low/ci_high[y][x] the overhead ratio's
    CI, overhead[y][x] the overhead ratio (the last row wins on
    duplicates)."""

    def __init__(self, rows, key, significance=True):
        self.xs = sorted({r["comm_target_us"] for r in rows})
        self.ys = sorted({r["comp_target_us"] for r in rows})
        shape = (len(self.ys), len(self.xs))
        self.values = np.full(shape, np.nan)
        self.overhead = np.full(shape, np.nan)
        self.ci_low = np.full(shape, np.nan)
        self.ci_high = np.full(shape, np.nan)
        self.state = np.full(shape, MISSING, dtype=int)
        self.faded = np.zeros(shape, dtype=bool)
        self.sig_known = np.zeros(shape, dtype=bool)
        for r in rows:
            j = self.ys.index(r["comp_target_us"])
            i = self.xs.index(r["comm_target_us"])
            self.values[j, i] = r[key]
            self.overhead[j, i] = r["overhead_ratio"]
            self.ci_low[j, i] = r["ci_low"]
            self.ci_high[j, i] = r["ci_high"]
            self.faded[j, i] = not r["in_summary"]
            self.sig_known[j, i] = (significance and r["valid"] and
                                    r["significant"] is not None)
            if not r["valid"]:
                self.state[j, i] = INVALID
            elif significance and r["significant"] is False:
                self.state[j, i] = NOT_SIGNIFICANT
            else:
                self.state[j, i] = VALID

    def shape(self):
        """(number of comm targets, number of comp targets)."""
        return len(self.xs), len(self.ys)

    def valid_count(self):
        """Cells whose calibration converged (significant or not)."""
        return int(np.count_nonzero((self.state == VALID) |
                                    (self.state == NOT_SIGNIFICANT)))

    def not_significant_count(self):
        return int(np.count_nonzero(self.state == NOT_SIGNIFICANT))

    def significance_known(self):
        """Whether the CSV gave a significance for any valid cell."""
        return bool(self.sig_known.any())

    def diagonal_median(self):
        """(median, n) of the overhead ratio over the valid, finite cells
        not flagged not significant (all of them when the CSV has no
        significance), in the summary, whose two targets are within
        DIAGONAL_FACTOR of each other; (NaN, 0) without any."""
        values = []
        for (j, i), st in np.ndenumerate(self.state):
            lo, hi = sorted((self.xs[i], self.ys[j]))
            v = self.overhead[j, i]
            if (st == VALID and not self.faded[j, i] and math.isfinite(v)
                    and hi <= DIAGONAL_FACTOR * lo):
                values.append(v)
        if not values:
            return float("nan"), 0
        return float(np.median(values)), len(values)


def text_color(cmap, norm, v):
    """Black or white, whichever reads on the colour of v."""
    r, g, b, _ = cmap(norm(v))
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.45 else "black"


def draw_heatmap(ax, grid, cmap, norm, fmt, fontsize, ticks=True, ci=False,
                 tick_size=None):
    """Draws grid on ax with values fmt(v) in each cell (with ci, a not
    significant cell's CI below its "n.s.") and the comm = comp diagonal,
    tick labels in tick_size (default fontsize + 1); returns the image for a
    colour bar."""
    tick_size = tick_size or fontsize + 1
    xs, ys, values, state = grid.xs, grid.ys, grid.values, grid.state
    shown = np.ma.masked_where((state != VALID) | ~np.isfinite(values),
                               values)
    ax.set_facecolor(MISSING_COLOR)
    image = ax.imshow(shown, cmap=cmap, norm=norm, origin="lower",
                      aspect="auto", interpolation="nearest")
    for (j, i), st in np.ndenumerate(state):
        v = values[j, i]
        if st == MISSING:
            continue
        if st == NOT_SIGNIFICANT:
            ax.add_patch(Rectangle((i - 0.5, j - 0.5), 1, 1, lw=0.5,
                                   facecolor=NS_COLOR, edgecolor="#808080",
                                   hatch=NS_HATCH))
            lo, hi = grid.ci_low[j, i], grid.ci_high[j, i]
            box = dict(facecolor=NS_COLOR, edgecolor="none", pad=0.6)
            if ci and not math.isnan(lo):
                ax.text(i, j + 0.13, "n.s.", ha="center", va="center",
                        fontsize=fontsize, color="black", bbox=box, zorder=4)
                ax.text(i, j - 0.2, format_ci(lo, hi), ha="center",
                        va="center", fontsize=fontsize * 0.72, color="black",
                        bbox=box, zorder=4)
            else:
                ax.text(i, j, "n.s.", ha="center", va="center",
                        fontsize=fontsize, color="black", bbox=box, zorder=4)
        elif st == INVALID or not math.isfinite(v):
            ax.add_patch(Rectangle((i - 0.5, j - 0.5), 1, 1, lw=0.5,
                                   facecolor=BAD_COLOR, edgecolor="#606060",
                                   hatch="///" if st == INVALID else None))
            ax.text(i, j, "invalid" if st == INVALID else "nan", ha="center",
                    va="center", fontsize=fontsize * 0.85, color="black",
                    zorder=4,
                    bbox=dict(facecolor=BAD_COLOR, edgecolor="none", pad=0.5)
                    if st == INVALID else None)
        else:
            ax.text(i, j, fmt(v), ha="center", va="center", fontsize=fontsize,
                    color="black" if grid.faded[j, i]
                    else text_color(cmap, norm, v), zorder=4)
        if grid.faded[j, i]:
            # A white veil over the cell and its text.
            ax.add_patch(Rectangle((i - 0.5, j - 0.5), 1, 1, lw=0,
                                   facecolor="white", alpha=FADED_ALPHA,
                                   zorder=4.5))
    # comm = comp: each time's position on both axes, interpolated in log.
    common = sorted(v for v in set(xs) | set(ys)
                    if max(xs[0], ys[0]) <= v <= min(xs[-1], ys[-1]))
    if len(common) >= 2 and len(xs) >= 2 and len(ys) >= 2:
        lx, ly = np.log(xs), np.log(ys)
        px = np.interp(np.log(common), lx, np.arange(len(xs)))
        py = np.interp(np.log(common), ly, np.arange(len(ys)))
        ax.plot(px, py, ls="--", color="black", lw=0.8, alpha=0.6, zorder=5)
    ax.set_xlim(-0.5, len(xs) - 0.5)
    ax.set_ylim(-0.5, len(ys) - 0.5)
    ax.set_xticks(range(len(xs)))
    ax.set_yticks(range(len(ys)))
    ax.set_xticklabels([format_us(x) for x in xs] if ticks else [],
                       rotation=30 if len(xs) > 5 else 0,
                       fontsize=tick_size)
    ax.set_yticklabels([format_us(y) for y in ys] if ticks else [],
                       fontsize=tick_size)
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
    return max(4.5, min(base, base * 6 / max(*grid.shape(), 1)))


def notes(grids, min_bytes):
    """The subtitle lines of a figure drawing grids: how many valid cells
    are not significant (when the CSV says), which cells are faded."""
    lines = []
    if any(g.significance_known() for g in grids):
        valid = sum(g.valid_count() for g in grids)
        ns = sum(g.not_significant_count() for g in grids)
        lines.append(f"{ns} of {valid} valid cells not significant "
                     "(n.s.: 95% CI too wide)")
    if any(g.faded.any() for g in grids):
        lines.append(f"cells under {format_bytes(min_bytes)} faded: outside "
                     "the summary")
    return lines


def suptitle(fig, lines, fontsize=12):
    """lines as fig's title, each wrapped to the figure's width (a long
    note must not widen a narrow figure)."""
    chars = max(40, int(fig.get_size_inches()[0] * 72 / (0.55 * fontsize)))
    fig.suptitle("\n".join(textwrap.fill(line, chars) for line in lines
                           if line), fontsize=fontsize)


def ns_legend(fig, grids, **kwargs):
    """A legend for the grey cells present in grids (none when none)."""
    handles = []
    if any((g.state == NOT_SIGNIFICANT).any() for g in grids):
        handles.append(Patch(facecolor=NS_COLOR, edgecolor="#808080",
                             hatch=NS_HATCH, label="n.s. = not significant"))
    if any((g.state == INVALID).any() for g in grids):
        handles.append(Patch(facecolor=BAD_COLOR, edgecolor="#606060",
                             hatch="///",
                             label="invalid = calibration did not converge"))
    if handles:
        # Below the figure (savefig's tight box takes it in).
        fig.legend(handles=handles, ncol=len(handles), frameon=False,
                   loc="upper center", bbox_to_anchor=(0.5, 0.0), **kwargs)


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


def ratio2(v):
    """An overhead ratio in a cell: "0.37"."""
    return f"{v:.2f}"


def label_axes(ax):
    """The axis labels of every heat-map."""
    ax.set_xlabel("communication time (target)")
    ax.set_ylabel("computation time (target)")


def plot_single(key, rows, maps, prefix, min_bytes, out_dir):
    """overhead_*.png and concurrency_*.png for one (lib, config, coll)."""
    lib, config, coll = key
    head = f"{prefix} {lib} {config}".strip()
    stem = "_".join(safe(k) for k in key)
    grid = Grid(rows, "overhead_ratio")
    nx, ny = grid.shape()
    fs = annotation_size(grid, 10)
    sub = notes([grid], min_bytes)
    fig, ax = plt.subplots(figsize=(max(6.5, 0.9 * nx + 3),
                                    max(5, 0.75 * ny + 2) + 0.3 * len(sub)),
                           layout="constrained")
    image = draw_heatmap(ax, grid, *maps["overhead"], ratio2, fs, ci=True)
    cbar = fig.colorbar(image, ax=ax, extend="both")
    cbar.set_label("overhead ratio (0 perfect overlap, 1 serialized)")
    label_axes(ax)
    if sub:
        # The notes as a smaller subtitle under the title.
        suptitle(fig, [f"{head}: {coll} overhead ratio"])
        ax.set_title("\n".join(sub), fontsize=9)
    else:
        ax.set_title(f"{head}: {coll} overhead ratio")
    save(fig, out_dir, f"overhead_{stem}.png")

    fig, axes = plt.subplots(1, 2, figsize=(2 * max(6, 0.9 * nx + 2.5),
                                            max(5, 0.75 * ny + 2)),
                             layout="constrained")
    grids = []
    for ax, column, what, extend in (
            (axes[0], "comm_ratio", "r_comm = (t_call + t_wait) / t_comm_ref",
             "max"),
            (axes[1], "comp_slowdown", "r_comp_slowdown = t_comp / t_comp_ref",
             "both")):
        # The significance flag is the overhead ratio's: these ratios have
        # other denominators (the reference times) and keep their values.
        g = Grid(rows, column, significance=False)
        grids.append(g)
        image = draw_heatmap(ax, g, *maps[column], pct, fs)
        cbar = fig.colorbar(image, ax=ax, extend=extend,
                            format=PercentFormatter(1.0))
        cbar.set_label(what.split(" =")[0])
        label_axes(ax)
        ax.set_title(what, fontsize=11)
    lines = [f"{head}: {coll} concurrency ratios"]
    if Grid(rows, "overhead_ratio").significance_known():
        lines.append("(the n.s. flag is the overhead ratio's; these ratios "
                     "have other denominators and keep their values)")
    suptitle(fig, lines + notes(grids[:1], min_bytes))
    save(fig, out_dir, f"concurrency_{stem}.png")


def no_data(ax, text="no data"):
    """An empty panel saying text."""
    ax.set_facecolor(MISSING_COLOR)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes,
            fontsize=8)


def plot_overview(groups, maps, prefix, min_bytes, out_dir):
    """overview_overhead.png: rows library:config, columns collectives."""
    pairs = list(dict.fromkeys((k[0], k[1]) for k in groups))
    colls = list(dict.fromkeys(k[2] for k in groups))
    fig, axes = plt.subplots(len(pairs), len(colls), squeeze=False,
                             figsize=(3.4 * len(colls) + 1.5,
                                      2.9 * len(pairs) + 1),
                             layout="constrained")
    image = None
    grids = []
    for (r, (lib, config)), (c, coll) in (
            (rc, cc) for rc in enumerate(pairs) for cc in enumerate(colls)):
        ax = axes[r][c]
        rows = groups.get((lib, config, coll))
        if rows is None:
            no_data(ax)
        else:
            grid = Grid(rows, "overhead_ratio")
            grids.append(grid)
            image = draw_heatmap(ax, grid, *maps["overhead"], ratio2,
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
    suptitle(fig, [f"{title} (columns)".strip()] + notes(grids, min_bytes),
             fontsize=13)
    save(fig, out_dir, "overview_overhead.png")


def parse_keys(text):
    """--compare's "lib:config,..." as [(lib, config)]; ValueError naming
    the bad key."""
    keys = []
    for item in text.split(","):
        item = item.strip()
        parts = item.split(":")
        if len(parts) != 2 or not all(p.strip() for p in parts):
            raise ValueError(f"Invalid value for --compare: {item!r}. "
                             "Expected: comma-separated library:config "
                             "keys, e.g. rondo:default,openmpi:default")
        key = (parts[0].strip(), parts[1].strip())
        if key in keys:
            raise ValueError(f"Invalid value for --compare: {item!r} is "
                             "given twice")
        keys.append(key)
    return keys


def median_text(grid):
    """ "median 0.12 (9 cells)" of grid's significant diagonal cells."""
    median, n = grid.diagonal_median()
    if n == 0:
        return ("no significant diagonal cell" if grid.significance_known()
                else "no valid diagonal cell")
    return f"median {median:.2f} ({n} cell{'s' if n != 1 else ''})"


def plot_compare(groups, keys, maps, prefix, min_bytes, out_dir):
    """compare_<coll>.png per collective (the KEYS side by side) and
    compare_all.png (rows collectives, columns KEYS); KEYS without data
    are left out with a message."""
    present = {(k[0], k[1]) for k in groups}
    for lib, config in keys:
        if (lib, config) not in present:
            print(f"--compare: {lib}:{config} is not in the CSV; left out")
    keys = [k for k in keys if k in present]
    if not keys:
        print("--compare: none of the keys is in the CSV; no compare "
              "figures")
        return
    colls = list(dict.fromkeys(k[2] for k in groups))
    cmap, norm = maps["overhead"]
    known = any(r["significant"] is not None
                for k, rows in groups.items() if k[:2] in keys for r in rows)
    summary = (f"median: {'significant ' if known else ''}valid cells on "
               f"the diagonal (targets within {DIAGONAL_FACTOR:g}x)")
    if min_bytes > 0:
        summary += f" of at least {format_bytes(min_bytes)}"
    for coll in colls:
        here = [k for k in keys if (*k, coll) in groups]
        for lib, config in keys:
            if (lib, config) not in here:
                print(f"--compare: {lib}:{config} has no {coll} cell; left "
                      f"out of compare_{safe(coll)}.png")
        if not here:
            continue
        grids = [Grid(groups[(*k, coll)], "overhead_ratio") for k in here]
        nx, ny = max(g.shape()[0] for g in grids), max(g.shape()[1]
                                                       for g in grids)
        # Sized for the README: about 1400 px wide for four 5x5 panels.
        width = max(2.8, 0.5 * nx + 0.5)
        fig, axes = plt.subplots(1, len(here), squeeze=False,
                                 figsize=(width * len(here) + 1.2,
                                          max(3.4, 0.5 * ny + 1.6)),
                                 layout="constrained", sharey=True)
        image = None
        for ax, (lib, config), grid in zip(axes[0], here, grids):
            image = draw_heatmap(ax, grid, cmap, norm, ratio2,
                                 annotation_size(grid, 10.5), tick_size=9)
            print(f"compare {coll}: {lib}:{config} {median_text(grid)}; " +
                  (f"{grid.not_significant_count()} of {grid.valid_count()} "
                   "valid cells not significant"
                   if grid.significance_known() else
                   f"{grid.valid_count()} valid cells, significance unknown"))
            ax.set_title(f"{lib}:{config}\n{median_text(grid)}",
                         fontsize=11)
            ax.set_xlabel("communication (target)", fontsize=10)
        axes[0][0].set_ylabel("computation (target)", fontsize=10)
        cbar = fig.colorbar(image, ax=axes[0].tolist(), extend="both",
                            aspect=25, pad=0.01)
        cbar.set_label("overhead ratio\n(0 overlap, 1 serialized)",
                       fontsize=10)
        title = f"{prefix} {coll} overhead ratio".strip()
        suptitle(fig, [f"{title}; {summary}",
                       "; ".join(notes(grids, min_bytes))])
        ns_legend(fig, grids, fontsize=9)
        save(fig, out_dir, f"compare_{safe(coll)}.png")

    fig, axes = plt.subplots(len(colls), len(keys), squeeze=False,
                             figsize=(3.2 * len(keys) + 1.5,
                                      2.8 * len(colls) + 1.2),
                             layout="constrained")
    image = None
    grids = []
    for (r, coll), (c, (lib, config)) in (
            (rc, cc) for rc in enumerate(colls) for cc in enumerate(keys)):
        ax = axes[r][c]
        rows = groups.get((lib, config, coll))
        if rows is None:
            no_data(ax)
            head = "no data"
        else:
            grid = Grid(rows, "overhead_ratio")
            grids.append(grid)
            image = draw_heatmap(ax, grid, cmap, norm, ratio2,
                                 annotation_size(grid, 8), tick_size=7.5)
            head = median_text(grid)
        ax.set_title(f"{lib}:{config}\n{head}" if r == 0 else head,
                     fontsize=10 if r == 0 else 8.5)
        if c == 0:
            ax.set_ylabel(f"{coll}\ncomputation (target)", fontsize=9)
        if r == len(colls) - 1:
            ax.set_xlabel("communication (target)", fontsize=9)
    cbar = fig.colorbar(image, ax=axes, extend="both", shrink=0.7, aspect=30)
    cbar.set_label("overhead ratio (0 perfect overlap, 1 serialized)")
    title = f"{prefix} overhead ratio: collective (rows) x library:config"
    suptitle(fig, [f"{title} (columns)".strip(), summary] +
             notes(grids, min_bytes))
    save(fig, out_dir, "compare_all.png")


def read_impact(path):
    """IMPACT.csv as {"library:config": [(ratio, ratio_worst, worst_rank),
    ...]} in CSV order (NaN/None for the optional columns when absent)."""
    values = {}
    _, rows = read_csv(path, IMPACT_COLUMNS)
    for line, r in rows:
        key = f"{(r['library'] or '').strip()}:{(r['config'] or '').strip()}"
        values.setdefault(key, []).append((
            parse_float(r["ratio"], path, line, "ratio"),
            parse_float(r.get("ratio_worst"), path, line, "ratio_worst"),
            parse_count(r.get("worst_rank"), path, line, "worst_rank")))
    return values


def nanmean(values):
    """The mean of the finite values, NaN without any."""
    finite = [v for v in values if math.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


def plot_impact(values, prefix, out_dir):
    """mpi_impact.png: r_MPI_impact per library:config (mean of duplicate
    rows, n shown), with a hatched bar for the worst rank when the CSV has
    it; red line at 1 = no impact (paper Figure 9)."""
    labels = [k if len(v) == 1 else f"{k}\n(mean of {len(v)})"
              for k, v in values.items()]
    means = [nanmean([t[0] for t in v]) for v in values.values()]
    worst = [nanmean([t[1] for t in v]) for v in values.values()]
    ranks = [{t[2] for t in v} for v in values.values()]
    has_worst = any(math.isfinite(w) for w in worst)
    width = 0.38 if has_worst else 0.6
    fig, ax = plt.subplots(figsize=(max(5, (1.9 if has_worst else 1.3)
                                        * len(labels) + 2), 4.5))
    pos = np.arange(len(means))
    offset = width / 2 if has_worst else 0.0
    bars = ax.bar(pos - offset, np.nan_to_num(means), color="#4a7fc1",
                  width=width, label="ratio" if has_worst else None)
    for bar, m in zip(bars, means):
        ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height(),
                f"{m:.2f}", ha="center", va="bottom", fontsize=10)
    if has_worst:
        wbars = ax.bar(pos + offset, np.nan_to_num(worst), width=width,
                       color="#f4a582", edgecolor="#b2182b", hatch="//",
                       label="worst rank (ratio_worst)")
        for bar, w, rs in zip(wbars, worst, ranks):
            if not math.isfinite(w):
                continue
            rank = (f"\nrank {next(iter(rs))}"
                    if len(rs) == 1 and None not in rs else "")
            ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height(),
                    f"{w:.2f}{rank}", ha="center", va="bottom", fontsize=9)
    ax.axhline(1.0, color="red", lw=1.5, label="no impact (1)")
    finite = [m for m in means + worst if math.isfinite(m)]
    ax.set_ylim(0, max([1.2] + [(1.25 if has_worst else 1.15) * m
                                for m in finite]))
    ax.set_xticks(pos)
    ax.set_xticklabels(labels, fontsize=9)
    ax.set_ylabel("r_MPI_impact = t_comp_passive_mpi / t_comp_ref")
    ax.set_title(f"{prefix} MPI impact on computation".strip())
    if has_worst:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    else:
        ax.legend(loc="lower right")
    save(fig, out_dir, "mpi_impact.png")


def min_bytes_arg(text):
    """--min-bytes: a non-negative integer."""
    if not re.fullmatch(r"[0-9]+", text.strip()):
        raise argparse.ArgumentTypeError(
            f"Invalid value for --min-bytes: {text!r}. Expected: a "
            "non-negative integer number of bytes")
    return int(text)


def compare_arg(text):
    """--compare: library:config keys."""
    try:
        return parse_keys(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def main(argv=None):
    """Parses the arguments, reads the CSVs and writes every figure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", required=True, help="overlap results CSV")
    parser.add_argument("--impact-csv", help="MPI impact ratio CSV")
    parser.add_argument("--out-dir", required=True, help="output directory")
    parser.add_argument("--title-prefix", default="", help="title prefix")
    parser.add_argument("--compare", type=compare_arg, metavar="KEYS",
                        help="library:config,... drawn side by side "
                        "(compare_<coll>.png, compare_all.png)")
    parser.add_argument("--min-bytes", type=min_bytes_arg, default=0,
                        metavar="B",
                        help="cells with fewer bytes per block are faded and "
                        "left out of the medians (default 0)")
    parser.add_argument("--verbose", action="store_true",
                        help="one line per figure written")
    args = parser.parse_args(argv)
    global VERBOSE
    VERBOSE = args.verbose
    try:
        results, has_bytes = read_results(args.csv)
        if args.min_bytes > 0 and not has_bytes:
            raise CsvError(f"{args.csv}: --min-bytes {args.min_bytes} needs "
                           "the bytes column, which the CSV lacks")
        for row in results:
            row["in_summary"] = args.min_bytes == 0 or (
                row["bytes"] is not None and row["bytes"] >= args.min_bytes)
        impact = read_impact(args.impact_csv) if args.impact_csv else None
        os.makedirs(args.out_dir, exist_ok=True)
        groups = {}
        for row in results:
            key = (row["library"], row["config"], row["collective"])
            groups.setdefault(key, []).append(row)
        maps = colormaps()
        for key, rows in groups.items():
            plot_single(key, rows, maps, args.title_prefix, args.min_bytes,
                        args.out_dir)
        plot_overview(groups, maps, args.title_prefix, args.min_bytes,
                      args.out_dir)
        if args.compare:
            plot_compare(groups, args.compare, maps, args.title_prefix,
                         args.min_bytes, args.out_dir)
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
