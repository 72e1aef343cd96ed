"""Results of nicsim runs as plain Python objects (dicts and lists in the layout of
docs/results.md) with pandas DataFrames of the tabular parts when pandas is installed."""

import json


def _pandas():
    try:
        import pandas
    except ImportError as e:
        raise ImportError("nicsim: DataFrames need pandas (Debian: python3-pandas)") from e
    return pandas


def _mbit(bps):
    return bps / 1e6


class Results:
    """One results document: `meta` (dict) and `runs` (list of dicts, one per run)."""

    def __init__(self, document):
        if document.get("format") != "nicsim-results":
            raise ValueError("not a nicsim results document")
        self.document = document
        self.meta = document["meta"]
        self.runs = document["runs"]

    @classmethod
    def from_json(cls, text):
        return cls(json.loads(text))

    def __len__(self):
        return len(self.runs)

    def __getitem__(self, index):
        return self.runs[index]

    def __iter__(self):
        return iter(self.runs)

    def __repr__(self):
        lines = [f"<nicsim.Results: {len(self.runs)} run(s)>"]
        for r in self.runs:
            parts = [f"goodput {d} {_mbit(bps):.4g} Mbit/s"
                     for d, bps in r["goodput_bps"].items() if r["transfer"][d]["flows"]]
            parts += [f"{name} mean {p['mean']:.4g} ms" for name, p in r["latency_ms"].items()]
            lines.append(f"  {r['label'] or '(single)'}: " + (", ".join(parts) or "no traffic"))
        return "\n".join(lines)

    # --- DataFrames (pandas) -------------------------------------------------------------
    # Every frame starts with the run's label and its [vary] parameters as columns, so a sweep
    # is one frame to group or pivot on.

    def _run_columns(self, run):
        return {"run": run["label"], **run["params"]}

    def flows(self):
        """One row per flow and direction: end-of-run sender and receiver totals."""
        rows = []
        for run in self.runs:
            for direction, transfer in run["transfer"].items():
                for f in transfer["flows"]:
                    rows.append({**self._run_columns(run), "direction": direction,
                                 "flow": f["id"], "name": f.get("name", ""),
                                 "dscp": f.get("dscp", 0),
                                 "sent_bytes": f["sender"]["bytes"],
                                 "received_bytes": f["receiver"]["bytes"],
                                 "goodput_bps": f["receiver"]["bits_per_second"],
                                 "retransmits": f["sender"]["retransmits"]})
        return _pandas().DataFrame(rows)

    def intervals(self):
        """One row per interval and direction (iperf3's interval table), probe means as
        `latency_<probe>_ms` columns."""
        rows = []
        for run in self.runs:
            for iv in run["intervals"]:
                latency = {f"latency_{k}_ms": v for k, v in iv.get("latency_ms", {}).items()}
                for direction, d in iv["directions"].items():
                    rows.append({**self._run_columns(run), "start_s": iv["start_s"],
                                 "end_s": iv["end_s"], "direction": direction,
                                 "bytes": d["bytes"], "bits_per_second": d["bits_per_second"],
                                 "retransmits": d["retransmits"],
                                 "cwnd_bytes": d["cwnd_bytes"], **latency})
        return _pandas().DataFrame(rows)

    def probes(self):
        """One row per probe sample: send time and round-trip time (NaN = lost)."""
        rows = []
        for run in self.runs:
            for name, probe in run["latency_ms"].items():
                series = probe.get("series", {})
                for t, rtt in zip(series.get("time_s", []), series.get("rtt_ms", [])):
                    rows.append({**self._run_columns(run), "probe": name, "kind": probe["kind"],
                                 "time_s": t, "rtt_ms": float("nan") if rtt is None else rtt})
        return _pandas().DataFrame(rows)

    def queues(self):
        """One row per queue sample and interface: qdisc, ring, BQL and device FIFO."""
        frames = []
        pandas = _pandas()
        for run in self.runs:
            for interface, series in run["queues"].items():
                frame = pandas.DataFrame(series)
                frame.insert(0, "interface", interface)
                for i, (k, v) in enumerate(self._run_columns(run).items()):
                    frame.insert(i, k, v)
                frames.append(frame)
        return pandas.concat(frames, ignore_index=True) if frames else pandas.DataFrame()
