#!/usr/bin/python3
# Draws one of a flent data file's plots with Debian's flent itself (its own entry point, the
# test's own plot configuration) and fails when flent fails, when a data series the plot reads
# (ResultSet.series / raw_series, after flent expanded the plot's globs and computed its
# derived series) has no finite value, or when an axes it drew holds no data (every visible
# axes of the saved figure must have a finite point on a line, a patch, or a point in a
# collection). Run with the Python flent is installed for.
# Usage: flent_plot_check.py FILE.flent.gz PLOT OUT.png
import math
import sys

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

problems = []
saved = []
original_savefig = Figure.savefig


def finite_points(ax):
    n = 0
    for line in ax.lines:
        for y in line.get_ydata():
            try:
                if math.isfinite(float(y)):
                    n += 1
            except (TypeError, ValueError):
                pass
    n += sum(1 for p in ax.patches if p.get_visible())
    for c in ax.collections:
        try:
            n += len(c.get_offsets())
        except (AttributeError, TypeError):
            pass
    return n


def checking_savefig(self, *args, **kwargs):
    drawn = [ax for ax in self.axes if ax.get_visible() and ax.axison]
    if not drawn:
        problems.append("the figure has no axes")
    for i, ax in enumerate(drawn):
        if finite_points(ax) == 0:
            problems.append("axes %d (%r) holds no data" % (i, ax.get_ylabel()))
    saved.append(True)
    return original_savefig(self, *args, **kwargs)


Figure.savefig = checking_savefig

sys.path.insert(0, "/usr/share/flent")  # Debian's flent package
from flent import resultset  # noqa: E402

read = {}  # series name -> whether it had a finite value


def has_finite(values):
    for v in values:
        if isinstance(v, dict):
            v = v.get("val")
        elif isinstance(v, (list, tuple)):
            v = v[-1] if v else None
        try:
            if v is not None and math.isfinite(float(v)):
                return True
        except (TypeError, ValueError):
            pass
    return False


def recording(method):
    def wrapper(self, name, *args, **kwargs):
        out = method(self, name, *args, **kwargs)
        try:
            read[name] = read.get(name, False) or has_finite(list(out))
        except TypeError:
            pass
        return out

    return wrapper


resultset.ResultSet.series = recording(resultset.ResultSet.series)
resultset.ResultSet.raw_series = recording(resultset.ResultSet.raw_series)
resultset.ResultSet.__getitem__ = recording(resultset.ResultSet.__getitem__)

file, plot, out = sys.argv[1:4]
sys.argv = ["flent", "-i", file, "-p", plot, "-o", out]
from flent import run_flent  # noqa: E402

try:
    rc = run_flent()
except SystemExit as e:
    rc = e.code
if rc not in (None, 0):
    sys.exit("flent exited %s drawing %s of %s" % (rc, plot, file))
if not saved:
    sys.exit("flent saved no figure for %s of %s" % (plot, file))
if not read:
    problems.append("flent read no data series")
problems += ["series '%s' has no data" % n for n, ok in sorted(read.items()) if not ok]
if problems:
    sys.exit("%s of %s: %s" % (plot, file, "; ".join(problems)))
