#!/usr/bin/env python3
"""Tests bench/overlap/overlap_plot.py on small hand-made CSVs: the significance
columns (not significant cells, their CI), --min-bytes, --compare with two
libraries and one absent key (the medians it prints are checked against
values computed by hand), the worst-rank impact bars, backward compatibility
with the CSV without the new columns, and exit status 2 with a message
naming the line and column on bad input.

Runs the script with a python3 that has matplotlib (this interpreter, else
python3 or /usr/bin/python3 as bench/common/plot.cc looks for one); without one it
says so and passes (skipped).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HEADER = ("library,config,collective,comm_target_us,comp_target_us,comm_us,"
          "comp_us,measured_us,overhead_ratio,comm_ratio,comp_slowdown,valid")
NEW_COLUMNS = ",bytes,significant,ci_low,ci_high"
MIB = 1 << 20


def find_script():
    """bench/overlap/overlap_plot.py beside this test (runfiles or source tree)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "overlap_plot.py")
    if os.path.exists(here):
        return here
    return os.path.join(os.environ.get("TEST_SRCDIR", "."),
                        os.environ.get("TEST_WORKSPACE", "rondo"), "bench", "overlap",
                        "overlap_plot.py")


def find_python():
    """A python3 that imports matplotlib, or None."""
    for py in (sys.executable, "python3", "/usr/bin/python3"):
        path = shutil.which(py)
        if path and subprocess.run(
                [path, "-c", "import matplotlib, numpy"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL).returncode == 0:
            return path
    return None


SCRIPT = find_script()
PYTHON = find_python()
MPL_DIR = os.path.join(os.environ.get("TEST_TMPDIR", tempfile.gettempdir()),
                       "overlap_plot_test_mpl")


def cell(lib, coll, comm, comp, ratio, valid=True, nbytes=4 * MIB,
         significant=None, ci=None):
    """One RESULTS.csv row with the new columns; ratio None = empty."""
    r = "" if ratio is None else f"{ratio}"
    measured = max(comm, comp) + (ratio or 0) * min(comm, comp)
    sig = "" if significant is None else ("1" if significant else "0")
    lo, hi = ci if ci else ("", "")
    return (f"{lib},default,{coll},{comm},{comp},{comm},{comp},{measured},"
            f"{r},{r},{r},{1 if valid else 0},{nbytes},{sig},{lo},{hi}")


def results_rows():
    """Two libraries, ibcast and iallreduce on a 3x3 grid (100, 300, 900
    us: neighbours are within 3x, so the diagonal has 7 cells).

    rondo ibcast: diagonal cells (comm, comp) -> ratio
      (100,100) 0.10   (100,300) 0.20 not significant
      (300,100) 0.30   (300,300) 0.40 but 64 KiB (faded with --min-bytes)
      (300,900) invalid   (900,300) 0.50   (900,900) 0.60
      off the diagonal: (100,900) 0.70 not significant, (900,100) 0.80
    With --min-bytes 1 MiB the median is over 0.10 0.30 0.50 0.60 = 0.40
    (4 cells); 2 of 8 valid cells are not significant.
    openmpi ibcast: every cell valid and significant, ratio 0.9 on the
    diagonal but (900,900) 1.5: median 0.90 (7 cells).
    iallreduce: rondo only, every diagonal cell not significant."""
    rows = []
    t = (100, 300, 900)
    rondo = {(100, 100): (0.10, True), (100, 300): (0.20, False),
             (300, 100): (0.30, True), (300, 300): (0.40, True),
             (300, 900): (None, None), (900, 300): (0.50, True),
             (900, 900): (0.60, True), (100, 900): (0.70, False),
             (900, 100): (0.80, True)}
    for (comm, comp), (ratio, sig) in rondo.items():
        rows.append(cell("rondo", "ibcast", comm, comp, ratio,
                         valid=ratio is not None,
                         nbytes=64 * 1024 if (comm, comp) == (300, 300)
                         else 4 * MIB, significant=sig,
                         ci=(ratio - 1.2, ratio + 1.3) if sig is False
                         else (ratio - 0.05, ratio + 0.05) if sig else None))
    for comm in t:
        for comp in t:
            on_diag = max(comm, comp) <= 3 * min(comm, comp)
            ratio = 1.5 if (comm, comp) == (900, 900) else (
                0.9 if on_diag else 0.2)
            rows.append(cell("openmpi", "ibcast", comm, comp, ratio,
                             significant=True, ci=(ratio - 0.1, ratio + 0.1)))
            rows.append(cell("rondo", "iallreduce", comm, comp, 0.3,
                             significant=not on_diag,
                             ci=(-1.0, 1.6) if on_diag else (0.25, 0.35)))
    return rows


def png_size(path):
    """(width, height) of a PNG file; AssertionError if it is not one."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    assert head[12:16] == b"IHDR", f"{path}: no IHDR chunk"
    return struct.unpack(">II", head[16:24])


@unittest.skipIf(PYTHON is None,
                 "SKIP: no python3 with matplotlib and numpy (Debian: "
                 "apt-get install python3-matplotlib)")
class OverlapPlotTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name, lines):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def run_script(self, *args):
        # One matplotlib cache for every run (a sandbox's HOME may be
        # read-only: each run would rebuild its font cache).
        env = dict(os.environ, MPLCONFIGDIR=MPL_DIR)
        return subprocess.run([PYTHON, SCRIPT, *args], capture_output=True,
                              text=True, timeout=120, env=env)

    def assert_png(self, out, name):
        path = os.path.join(out, name)
        self.assertTrue(os.path.exists(path), f"{name} not written")
        self.assertGreater(os.path.getsize(path), 2000, f"{name} too small")
        return png_size(path)

    def test_compare_significance_and_impact(self):
        csv_path = self.write("results.csv",
                              [HEADER + NEW_COLUMNS] + results_rows())
        impact = self.write("impact.csv", [
            "library,config,ratio,ratio_worst,worst_rank",
            "rondo,default,0.99,1.04,1", "openmpi,default,1.30,1.71,0"])
        out = os.path.join(self.tmp, "out")
        p = self.run_script("--csv", csv_path, "--impact-csv", impact,
                            "--out-dir", out, "--min-bytes", str(MIB),
                            "--compare",
                            "rondo:default,mpich:progress,openmpi:default")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertIn("--compare: mpich:progress is not in the CSV; left out",
                      lines)
        self.assertIn("compare ibcast: rondo:default median 0.40 (4 cells); "
                      "2 of 8 valid cells not significant", lines)
        self.assertIn("compare ibcast: openmpi:default median 0.90 (7 cells); "
                      "0 of 9 valid cells not significant", lines)
        self.assertIn("compare iallreduce: rondo:default no significant "
                      "diagonal cell; 7 of 9 valid cells not significant",
                      lines)
        self.assertIn("--compare: openmpi:default has no iallreduce cell; "
                      "left out of compare_iallreduce.png", lines)
        # 2 overhead + 2 concurrency for ibcast, 1 + 1 for iallreduce,
        # overview, compare_ibcast, compare_iallreduce, compare_all, impact.
        self.assertIn(f"wrote 11 figures in {out}", p.stdout)
        for name in ("overhead_rondo_default_ibcast.png",
                     "overhead_openmpi_default_ibcast.png",
                     "concurrency_rondo_default_ibcast.png",
                     "overhead_rondo_default_iallreduce.png",
                     "overview_overhead.png", "compare_all.png",
                     "mpi_impact.png"):
            self.assert_png(out, name)
        # Two panels side by side, one: the first is much wider.
        two_w, two_h = self.assert_png(out, "compare_ibcast.png")
        one_w, _ = self.assert_png(out, "compare_iallreduce.png")
        self.assertGreater(two_w, two_h)
        self.assertGreater(two_w, 1.3 * one_w)
        self.assertFalse(os.path.exists(os.path.join(out, "compare_.png")))

    def test_old_csv_without_new_columns(self):
        rows = [r.rsplit(",", 4)[0] for r in results_rows()
                if r.startswith("rondo,default,ibcast")]
        csv_path = self.write("old.csv", [HEADER] + rows)
        out = os.path.join(self.tmp, "old")
        p = self.run_script("--csv", csv_path, "--out-dir", out,
                            "--compare", "rondo:default")
        self.assertEqual(p.returncode, 0, p.stderr)
        # Without significance every valid diagonal cell counts, the 64 KiB
        # one too: 0.10 0.20 0.30 0.40 0.50 0.60.
        self.assertIn("compare ibcast: rondo:default median 0.35 (6 cells); "
                      "8 valid cells, significance unknown",
                      p.stdout.splitlines())
        self.assert_png(out, "compare_ibcast.png")
        # --min-bytes cannot be applied without the bytes column.
        p = self.run_script("--csv", csv_path, "--out-dir", out,
                            "--min-bytes", "1024")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--min-bytes 1024 needs the bytes column", p.stderr)

    def assert_bad(self, row, expected, args=()):
        """A CSV whose 4th line is row exits 2 naming line 4 and expected."""
        good = results_rows()[:2]
        path = self.write("bad.csv", [HEADER + NEW_COLUMNS] + good + [row])
        p = self.run_script("--csv", path, "--out-dir",
                            os.path.join(self.tmp, "bad"), *args)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(f"bad.csv:4: column {expected}", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "bad")),
                         "figures written from a bad CSV")

    def test_bad_input_exits_2(self):
        base = "rondo,default,ibcast,100,100,100,100,110,0.1,0.1,1,1,4096"
        self.assert_bad(base + ",2,0.0,0.2", "significant: expected 1, 0 or "
                        "empty, got '2'")
        self.assert_bad(base + ",yes,0.0,0.2", "significant: expected 1, 0 or "
                        "empty, got 'yes'")
        self.assert_bad(base + ",1,low,0.2", "ci_low: not a number: 'low'")
        self.assert_bad(base + ",1,0.0,", "ci_high: empty while ci_low is "
                        "'0.0'")
        self.assert_bad(base + ",1,0.5,0.2", "ci_low: '0.5' is above ci_high")
        self.assert_bad(base.replace(",4096", ",4.5") + ",1,0.0,0.2",
                        "bytes: expected a non-negative integer or empty, "
                        "got '4.5'")
        for arg, why in (("rondo", "'rondo'. Expected: comma-separated "
                                   "library:config"),
                         ("rondo:default,rondo:default",
                          "'rondo:default' is given twice")):
            p = self.run_script("--csv", "unused.csv", "--out-dir", self.tmp,
                                "--compare", arg)
            self.assertEqual(p.returncode, 2)
            self.assertIn(f"Invalid value for --compare: {why}", p.stderr)


if __name__ == "__main__":
    if PYTHON is None:
        print("SKIP: no python3 with matplotlib and numpy; overlap_plot.py "
              "not tested")
    unittest.main(verbosity=2)
