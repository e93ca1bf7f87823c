"""Child processes and a listening socket, shared by the tests that must bound a command
(a hang fails instead of stalling) and the hardening scripts in ``bench/``."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def entropy_process(
    argv: Sequence[str],
    *,
    timeout: float,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    python: str = sys.executable,
) -> subprocess.CompletedProcess[str]:
    """``python -m pytest_entropy ARGV`` in a child process, its output captured as text;
    :class:`subprocess.TimeoutExpired` after ``timeout`` seconds."""
    return subprocess.run(
        [python, "-m", "pytest_entropy", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )


def timed_entropy(
    argv: Sequence[str],
    *,
    timeout: float,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    python: str = sys.executable,
) -> tuple[subprocess.CompletedProcess[str] | None, float]:
    """:func:`entropy_process` and the seconds it took; ``None`` for a run killed at
    ``timeout`` (a hang)."""
    return timed_run([python, "-m", "pytest_entropy", *argv], timeout=timeout, cwd=cwd, env=env)


def timed_run(
    command: Sequence[str],
    *,
    timeout: float,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str] | None, float]:
    """Run ``command``, its output captured as text, and the seconds it took; ``None`` for
    a run killed at ``timeout`` (a hang)."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - started
    return done, time.monotonic() - started


class Listener:
    """Accepts TCP connections on 127.0.0.1 and counts them: silent (each held open and
    never answered, as a hostile or dead server would) or, with ``answer``, a tiny HTTP
    server that returns ``{}``."""

    def __init__(self, answer: bool = False) -> None:
        self.answer = answer
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.count = 0
        self.connections: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.count += 1
            if self.answer:
                connection.recv(65536)
                connection.sendall(
                    b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 2\r\n\r\n{}"
                )
                connection.close()
            else:
                self.connections.append(connection)  # held open, unanswered

    def close(self) -> None:
        # shutdown wakes the accepting thread: close alone leaves it blocked in accept
        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()
        for connection in self.connections:
            connection.close()
