"""Real services for the distributed tests: a moto S3 server and a Dask cluster, each a set of
separate processes on free 127.0.0.1 ports, started with bounded waits and always stopped.

The workers are started without any AWS settings in their environment, so a run that reads
``s3://`` on them works only if the client's storage options travel with the tasks.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# Bounded waits: a service that is not up by then fails the test instead of hanging it.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
# Secret-looking credentials: moto accepts any, and the tests check they are shown nowhere.
ACCESS_KEY = "AKIAENTROPYTESTKEY77"
SECRET_KEY = "entropy-test-secret-Zq8vXw2Lr5Tn"


def free_port() -> int:
    """A port nothing listens on right now (the OS picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def service_environment() -> dict[str, str]:
    """This environment without AWS or fsspec settings, with this checkout importable."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("AWS_", "FSSPEC_", "DASK_"))
    }
    path = environment.get("PYTHONPATH")
    environment["PYTHONPATH"] = f"{REPO}{os.pathsep}{path}" if path else str(REPO)
    return environment


def _die_with_parent() -> None:
    """Run in the child before it starts: on Linux it gets SIGTERM when the process that
    started it dies, even by SIGKILL, so an interrupted test run leaves no service behind."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(STOP_TIMEOUT)


def _wait_until(ready: Any, what: str, processes: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                raise RuntimeError(f"{what}: a process exited with status {process.returncode}")
        if ready():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start within {START_TIMEOUT:g} s")


# ------------------------------------------------------------------------------- S3


@dataclass
class S3Server:
    endpoint: str
    process: subprocess.Popen[bytes]

    def storage_options(self) -> dict[str, Any]:
        return {
            "key": ACCESS_KEY,
            "secret": SECRET_KEY,
            "client_kwargs": {"endpoint_url": self.endpoint},
        }

    def filesystem(self) -> Any:
        import s3fs

        # A fresh instance (no listing cache shared with the code under test).
        return s3fs.S3FileSystem(skip_instance_cache=True, **self.storage_options())


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def moto_s3(log: Path, *, authenticate: bool = False) -> Iterator[S3Server]:
    """``moto_server`` on a free loopback port; ``authenticate`` makes it refuse every key
    (no IAM user exists), for the denied-credentials test."""
    port = free_port()
    environment = service_environment()
    if authenticate:
        environment["INITIAL_NO_AUTH_ACTION_COUNT"] = "0"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=environment,
            preexec_fn=_die_with_parent,
        )
    try:
        endpoint = f"http://127.0.0.1:{port}"
        _wait_until(lambda: _answers(f"{endpoint}/moto-api/"), "moto server", [process])
        yield S3Server(endpoint, process)
    finally:
        _stop(process)


# ----------------------------------------------------------------------------- Dask


@dataclass
class DaskCluster:
    """A ``dask scheduler`` and its ``dask worker`` processes (no nanny: a killed worker
    stays dead, as a lost machine would)."""

    address: str
    directory: Path
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start_worker(self) -> subprocess.Popen[bytes]:
        """One more single-threaded worker; returns once the scheduler has it."""
        number = len(self.workers)
        before = self.worker_count()
        with open(self.directory / f"worker-{number}.log", "wb") as output:
            worker = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_worker",
                    self.address,
                    "--nthreads",
                    "1",
                    "--no-nanny",
                    "--no-dashboard",
                    "--host",
                    "127.0.0.1",
                    "--name",
                    f"entropy-test-worker-{number}",
                    "--local-directory",
                    str(self.directory / f"worker-{number}"),
                    "--death-timeout",
                    "60",
                ],
                stdout=output,
                stderr=subprocess.STDOUT,
                env=service_environment(),
                preexec_fn=_die_with_parent,
            )
        self.workers.append(worker)
        _wait_until(lambda: self.worker_count() > before, "dask worker", [worker])
        return worker

    def worker_count(self) -> int:
        import distributed

        with distributed.Client(self.address, timeout=10, set_as_default=False) as client:
            return len(client.scheduler_info(n_workers=-1)["workers"])

    def logs(self) -> str:
        return "".join(
            path.read_text(errors="replace") for path in sorted(self.directory.glob("*.log"))
        )

    def stop(self) -> None:
        for worker in self.workers:
            _stop(worker)
        _stop(self.scheduler)


def _address(scheduler_file: Path) -> str:
    try:
        return str(json.loads(scheduler_file.read_text())["address"])
    except (OSError, ValueError, KeyError):
        return ""  # not written yet, or half written


@contextmanager
def dask_cluster(directory: Path, workers: int = 2) -> Iterator[DaskCluster]:
    """A scheduler on a free loopback port and ``workers`` workers, stopped on exit."""
    directory.mkdir(parents=True, exist_ok=True)
    scheduler_file = directory / "scheduler.json"
    with open(directory / "scheduler.log", "wb") as output:
        scheduler = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(scheduler_file),
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=service_environment(),
            preexec_fn=_die_with_parent,
        )
    cluster: DaskCluster | None = None
    try:
        _wait_until(lambda: _address(scheduler_file), "dask scheduler", [scheduler])
        address = _address(scheduler_file)
        cluster = DaskCluster(address, directory, scheduler)
        for _ in range(workers):
            cluster.start_worker()
        yield cluster
    finally:
        if cluster is not None:
            cluster.stop()
        else:
            _stop(scheduler)


def kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL: no goodbye to the scheduler, as when a machine is lost."""
    with suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGKILL)
    process.wait(STOP_TIMEOUT)
