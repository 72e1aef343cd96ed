"""The Python module (python/nicsim): runs, results as plain objects and DataFrames, the
algorithms stepped from Python. Run by CTest (python_module) with PYTHONPATH=<build>/python."""

import math
import os
import pathlib

import pytest

import nicsim

SOURCE = pathlib.Path(os.environ.get("NICSIM_SOURCE_DIR", pathlib.Path(__file__).parents[2]))

# A short sweep: the 100 Mbit/s example with BQL off/on for 2 simulated seconds.
SWEEP = """
[scenario]
name = "short BQL sweep"
duration = "2s"
seed = 1
[hosts.a]
cpu = "x86-desktop"
nic = "generic-1g"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-1g"
[wire]
rate = "100Mbit"
delay = "1ms"
[[traffic.tcp]]
from = "a"
to = "b"
[[traffic.ping]]
from = "a"
to = "b"
interval = "100ms"
[vary]
"hosts.a.nic.bql" = [false, true]
"""


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    path = tmp_path_factory.mktemp("scenario") / "sweep.toml"
    path.write_text(SWEEP)
    return nicsim.run(path)


def test_run_returns_plain_objects(sweep):
    assert len(sweep) == 2
    assert [r["label"] for r in sweep] == ["bql=false", "bql=true"]
    assert sweep.runs[0]["params"] == {"hosts.a.nic.bql": False}
    for run in sweep:
        assert isinstance(run, dict)
        assert 50e6 < run["goodput_bps"]["a->b"] < 100e6
        assert run["latency_ms"]["ping"]["count"] > 0
    assert sweep.meta["nicsim_version"] == nicsim.__version__
    assert "2 run(s)" in repr(sweep) and "bql=true" in repr(sweep)


def test_same_seed_same_results(sweep, tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP)
    again = nicsim.run(path, seed=1)
    assert again.runs == sweep.runs


def test_bad_scenario_names_file_and_key(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(SWEEP.replace('rate = "100Mbit"', 'rate = "fast"'))
    with pytest.raises(ValueError, match=r"bad\.toml:\d+.*wire\.rate"):
        nicsim.run(path)


def test_dataframes(sweep):
    pytest.importorskip("pandas")
    flows = sweep.flows()
    assert set(flows["run"]) == {"bql=false", "bql=true"}
    assert (flows["goodput_bps"] > 50e6).all()
    intervals = sweep.intervals()
    assert "latency_ping_ms" in intervals.columns
    assert len(intervals[intervals["direction"] == "a->b"]) == 2 * 2  # 2 runs x 2 one-second intervals
    probes = sweep.probes()
    assert probes.groupby("run")["rtt_ms"].count().min() > 10
    queues = sweep.queues()
    assert {"interface", "bql_limit_bytes", "qdisc_bytes"} <= set(queues.columns)
    # BQL on: the sender's BQL limit is sampled and non-zero; off: it stays 0.
    on = queues[(queues["run"] == "bql=true") & (queues["interface"] == "a")]
    off = queues[(queues["run"] == "bql=false") & (queues["interface"] == "a")]
    assert on["bql_limit_bytes"].max() > 0 and off["bql_limit_bytes"].max() == 0


def test_fq_codel_steps():
    q = nicsim.algo.FqCodel()
    assert q.enqueue(now=0.0, len=1514, flow_hash=0x11110000) == "queued"
    assert q.enqueue(now=0.0, len=100, flow_hash=0x22220000, flow_id=2) == "queued"
    assert q.backlog_packets == 2 and q.backlog_bytes == 1614
    first = q.dequeue(now=0.001)
    assert first["len"] == 1514 and math.isclose(first["sojourn_s"], 0.001)
    assert q.dequeue(now=0.002)["flow_id"] == 2
    assert q.dequeue(now=0.003) is None
    assert q.stats["dequeued_packets"] == 2


def test_fq_codel_drops_a_standing_queue():
    # One bulk flow at twice a 10 Mbit/s link for 2 s: CoDel drops to hold the sojourn down.
    q = nicsim.algo.FqCodel()
    link_free = 0.0
    for step in range(20000):
        now = step * 1e-4
        if step % 6 == 0:
            q.enqueue(now=now, len=1514, flow_hash=7)
        while link_free <= now:
            p = q.dequeue(now=now)
            if p is None:
                break
            link_free = max(link_free, now) + p["len"] * 8 / 10e6
    assert q.stats["codel_drop_count"] > 0


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="flows"):
        nicsim.algo.FqCodel(flows=0)
    with pytest.raises(ValueError):
        nicsim.algo.FqCodel().dequeue(now=-1.0)


def test_dql_steps():
    d = nicsim.algo.Dql()
    d.queued(3000)
    assert d.inflight == 3000 and d.avail < 0
    d.completed(3000, now=0.001)
    assert d.inflight == 0 and d.limit > 0


def test_load_reads_a_results_file(sweep, tmp_path):
    import json
    path = tmp_path / "r.json"
    path.write_text(json.dumps(sweep.document))
    assert nicsim.load(path).runs == sweep.runs
