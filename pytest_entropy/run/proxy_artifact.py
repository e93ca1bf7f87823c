"""The compiled artifact an MCP proxy enforces (issue 31), re-read when its file changes."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from pytest_entropy.state.store import COMPILED, COMPILED_V3, load_path

__all__ = ["ArtifactHolder", "proxy_notice", "set_notice_renderer"]


_render: list[Callable[[str], str]] = []


def set_notice_renderer(render: Callable[[str], str]) -> None:
    """How the proxy's stderr lines are made safe to show (the command line gives the one
    terminal rendering of names, ``report.names.terminal_line``: tool names, paths and
    errors in these lines come from the server and the user)."""
    _render[:] = [render]


def proxy_notice(line: str) -> None:
    """One line on stderr; a closed stderr never stops the proxy."""
    for render in _render:
        line = render(line)
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # stderr closed: the proxy keeps forwarding


class ArtifactHolder:
    """The compiled artifact the proxy enforces, re-read whenever its file changes.

    A missing file enforces nothing; a damaged one (or, under metric v2, a version-2
    artifact) disables enforcement and says so on stderr once per distinct problem, and
    traffic keeps flowing. ``metric_version=3`` reads version-2 artifacts (and version-1 ones
    as inert migration data) and enforces their normal forms.
    """

    def __init__(self, path: Path | None, *, enabled: bool = True, metric_version: int = 2) -> None:
        self.path = path
        self.enabled = enabled and path is not None
        self.metric_version = metric_version
        self._stamp: tuple[int, int, int] | None = None
        self._artifact: dict[str, Any] | None = None
        self._said: str | None = None
        self._lock = threading.Lock()

    def current(self) -> dict[str, Any] | None:
        """The artifact in force now (``None``: nothing to enforce)."""
        if not self.enabled or self.path is None:
            return None
        try:
            info = os.stat(self.path)
            stamp: tuple[int, int, int] | None = (info.st_ino, info.st_size, info.st_mtime_ns)
        except OSError:
            stamp = None
        with self._lock:
            if stamp != self._stamp:
                self._stamp = stamp
                self._artifact = None if stamp is None else self._load(self.path)
            return self._artifact

    def _load(self, path: Path) -> dict[str, Any] | None:
        loaded = load_path(path, COMPILED_V3 if self.metric_version >= 3 else COMPILED)
        if loaded.file is not None:
            self._said = None
            return loaded.file
        if loaded.error is None:
            return None
        problem = f"{loaded.error}; enforcement is off until it is fixed (traffic is forwarded)"
        try:
            version = orjson.loads(path.read_bytes()).get("version")
        except (OSError, orjson.JSONDecodeError, AttributeError):
            version = None
        if version == 2 and self.metric_version < 3:
            problem = (
                "a version-2 artifact (metric v3) is enforced with --metric-version 3;"
                " enforcement is off (traffic is forwarded)"
            )
        message = f"entropy: proxy: {path}: {problem}"
        if message != self._said:
            self._said = message
            proxy_notice(message)
        return None
