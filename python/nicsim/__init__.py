"""nicsim from Python: run scenarios, read their results, step the queueing algorithms.

    import nicsim
    results = nicsim.run("scenarios/seeds/stmmac-bql.toml")
    print(results)                  # one line per run
    results.runs[0]["goodput_bps"]  # plain dicts and lists, as docs/results.md describes
    results.intervals()             # pandas DataFrames, when pandas is installed

    q = nicsim.algo.FqCodel()       # fq_codel stepped by your own clock (seconds)
    q.enqueue(now=0.0, len=1514, flow_hash=1)
    q.dequeue(now=0.001)

docs/python.md walks through the S3 BQL sweep.
"""

from . import _nicsim
from ._nicsim import algo
from .results import Results

__version__ = _nicsim.__version__
__all__ = ["run", "load", "Results", "algo", "__version__"]


def run(path, seed=None):
    """Simulate every run of the scenario file at `path` (one per [vary] combination).

    seed: overrides the scenario's seed (same seed, same results). Returns a Results.
    Raises ValueError naming file, line and key for a bad scenario.
    """
    return Results.from_json(_nicsim.run_json(str(path), seed))


def load(path):
    """Read a results file written by `nicsim run --json` (or nicsim emulate/rrul)."""
    with open(path, encoding="utf-8") as f:
        return Results.from_json(f.read())
