"""What ``pytest-entropy proxy`` adds to a ``tools/call`` over stdio (printed; not a test).

    python bench/bench_proxy.py [--calls 5000] [--rounds 3] [--concurrent 16]
                                [--throughput-calls 20000] [--memory-calls 100000]

Behind both connections is the suite's minimal upstream (``tests/servers/minimal_upstream``:
newline-delimited JSON-RPC, every call answered at once, no SDK), so the proxy is what is
measured. In the same run, interleaved round by round:

* latency: ``--calls`` sequential ``tools/call`` round trips, direct, through the proxy
  (recording into a temporary state directory, as it runs by default) and through a proxy
  that enforces a compiled overlay on every call; median and p99 of each, and the added
  median / p99;
* throughput: ``--throughput-calls`` calls with ``--concurrent`` requests always in flight;
  calls per second of each connection and the proxied / direct ratio;
* memory: the proxy's resident set size after a warm-up and after ``--memory-calls`` more
  calls (Linux ``/proc``), and every recorded line was flushed (the session file holds one
  trace line per call when the connection ends).

The best round of each figure is printed (a machine shared with other jobs slows some rounds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
UPSTREAM = [sys.executable, "-m", "tests.servers.minimal_upstream"]
PROXY = [sys.executable, "-m", "pytest_entropy", "proxy"]


class Connection:
    """A raw newline-delimited JSON-RPC client of one subprocess."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        self.next_id = 0
        self.request({"method": "initialize", "params": {}})
        self.request({"method": "tools/list"})

    def send(self, body: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, **body}).encode() + b"\n"
        self.process.stdin.write(line)
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the connection closed")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def request(self, body: dict[str, Any]) -> dict[str, Any]:
        self.send(body)
        return self.receive()

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()


CALL = {"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}


def latencies(connection: Connection, calls: int) -> list[float]:
    out = []
    for _ in range(calls):
        started = time.perf_counter()
        connection.request(CALL)
        out.append((time.perf_counter() - started) * 1000)
    return out


def throughput(connection: Connection, calls: int, concurrent: int) -> float:
    started = time.perf_counter()
    in_flight = 0
    sent = 0
    done = 0
    while done < calls:
        while in_flight < concurrent and sent < calls:
            connection.send(CALL)
            sent += 1
            in_flight += 1
        connection.receive()
        in_flight -= 1
        done += 1
    return calls / (time.perf_counter() - started)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def write_artifact(state: Path) -> None:
    """A compiled surface narrowing ``minimal.echo``'s ``mode`` (the calls send none, so every
    call is validated against the overlay and accepted)."""
    sys.path.insert(0, str(REPO))
    from pytest_entropy.core.artifact import serialize_artifact
    from pytest_entropy.core.canonical import schema_digest
    from pytest_entropy.sources.surface import load_surface
    from tests.servers.minimal_upstream import TOOLS

    surface = load_surface({"tools": TOOLS}, ref_prefix="minimal.")
    echo = next(a for a in surface["actions"] if a["ref"] == "minimal.echo")["inputSchema"]
    tight = json.loads(json.dumps(echo))
    tight["properties"]["mode"]["enum"] = ["fast", "slow"]
    artifact = {
        "version": 1,
        "metricVersion": 2,
        "actions": [
            {"ref": "minimal.echo", "inputSchema": tight, "baseSchemaDigest": schema_digest(echo)}
        ],
        "quarantined": [],
        "applied": [],
        "gate": {"passed": True, "beforeScore": 1, "afterScore": 0.5, "reasons": []},
        "evidenceDigest": "0" * 64,
    }
    state.mkdir(parents=True)
    (state / "compiled.json").write_text(serialize_artifact(artifact), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrent", type=int, default=16)
    parser.add_argument("--throughput-calls", type=int, default=20000)
    parser.add_argument("--memory-calls", type=int, default=100000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temporary:
        state = Path(temporary) / "state"
        proxied_argv = [*PROXY, "--state-dir", str(state), "--", *UPSTREAM]
        enforced = Path(temporary) / "enforced"
        enforcing_argv = [*PROXY, "--state-dir", str(enforced), "--", *UPSTREAM]
        write_artifact(enforced)
        rows: dict[str, list[float]] = {
            key: [] for key in ("dm", "d99", "pm", "p99", "dt", "pt", "em", "e99", "et")
        }
        for _ in range(args.rounds):
            for name, argv_ in (("d", UPSTREAM), ("p", proxied_argv), ("e", enforcing_argv)):
                connection = Connection(argv_)
                latencies(connection, 200)  # warm-up
                measured = latencies(connection, args.calls)
                rows[name + "m"].append(statistics.median(measured))
                rows[name + "99"].append(p99(measured))
                rows[name + "t"].append(
                    throughput(connection, args.throughput_calls, args.concurrent)
                )
                connection.close()
        direct_median, direct_p99 = min(rows["dm"]), min(rows["d99"])
        proxy_median, proxy_p99 = min(rows["pm"]), min(rows["p99"])
        direct_rate, proxy_rate = max(rows["dt"]), max(rows["pt"])
        print(f"latency per tools/call over {args.calls} sequential calls (best of {args.rounds}):")
        print(f"  direct   median {direct_median:.3f} ms  p99 {direct_p99:.3f} ms")
        print(f"  proxied  median {proxy_median:.3f} ms  p99 {proxy_p99:.3f} ms")
        print(
            f"  added    median {proxy_median - direct_median:.3f} ms"
            f"  p99 {proxy_p99 - direct_p99:.3f} ms"
        )
        enforce_median, enforce_p99 = min(rows["em"]), min(rows["e99"])
        print(
            f"  enforcing median {enforce_median:.3f} ms  p99 {enforce_p99:.3f} ms"
            f"  (added {enforce_median - direct_median:.3f} / {enforce_p99 - direct_p99:.3f} ms;"
            " every call validated against a compiled overlay)"
        )
        print(f"throughput, {args.concurrent} in flight, {args.throughput_calls} calls:")
        print(
            f"  direct {direct_rate:,.0f}/s  proxied {proxy_rate:,.0f}/s"
            f"  ratio {proxy_rate / direct_rate:.2f}"
            f"  (enforcing {max(rows['et']):,.0f}/s, ratio {max(rows['et']) / direct_rate:.2f})"
        )
        # memory over many calls, and every call's line on disk
        for old in (state / "sessions").glob("*.jsonl"):
            old.unlink()
        connection = Connection(proxied_argv)
        pid = connection.process.pid  # the proxy runs in the process started here
        throughput(connection, 2000, args.concurrent)
        before = rss_kib(pid)
        throughput(connection, args.memory_calls, args.concurrent)
        after = rss_kib(pid)
        connection.close()
        lines = sum(
            1
            for path in (state / "sessions").glob("*.jsonl")
            for line in path.read_bytes().splitlines()
            if b"fabric_exec" in line
        )
        print(
            f"memory: proxy RSS {before / 1024:.1f} MiB after 2,000 calls,"
            f" {after / 1024:.1f} MiB after {args.memory_calls:,} more"
            f" ({(after - before) / 1024:+.1f} MiB)"
        )
        print(
            f"recorded: {lines:,} trace lines for"
            f" {2000 + args.memory_calls + 1:,} calls and listings"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
