"""What every connection of one MCP proxy shares (:class:`HubState`), and its counts.

The hub (:class:`pytest_entropy.run.proxy.ProxyHub` makes its connections) keeps the live
declared surface (the state directory's ``surface.json``, written
under its lock), the compiled artifact's holder, the recording directory and its losses,
and the connections to tell when the surface changes. The message logic of a connection is
:mod:`pytest_entropy.run.proxy`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from pytest_entropy.core.canonical import EXPORT_INDENT_DEPTH, file_text
from pytest_entropy.core.inputs import live_surface_snapshot
from pytest_entropy.run.proxy_artifact import ArtifactHolder, proxy_notice
from pytest_entropy.sources.agent_dir import state_surface_path
from pytest_entropy.state.store import StoreError, state_lock, write_file_atomic

__all__ = ["Connection", "HubState", "ProxyStats"]


class Connection(Protocol):
    """What the hub needs of a connection (:class:`pytest_entropy.run.proxy.ProxyConnection`)."""

    initialized: bool

    def notify_list_changed(self) -> None: ...


_C = TypeVar("_C", bound=Connection)

_SURFACE_LOCK: Final = "surface.lock"


@dataclass(slots=True)
class ProxyStats:
    """What crossed the proxy, for stderr and tests."""

    messages: int = 0
    malformed: int = 0
    calls: int = 0
    refused: int = 0
    listings: int = 0
    unrecorded: int = 0  # trace records that could not be written (the disk refused them)


# ------------------------------------------------------------------------- the hub


class HubState:
    """What every connection of one proxy shares: the live surface, the artifact, the
    recording directory, and the connections to tell when the surface changes."""

    def __init__(
        self,
        *,
        record_dir: Path | None,
        state_dir: Path,
        artifact: ArtifactHolder,
        ref_prefix: str | None = None,
        redact: bool = False,
        advertise_list_changed: bool = False,
    ) -> None:
        self.record_dir = record_dir
        self.state_dir = state_dir
        self.artifact = artifact
        self.ref_prefix = ref_prefix
        self.redact = redact
        self.advertise_list_changed = advertise_list_changed
        self.stats = ProxyStats()
        self.surface: dict[str, Any] | None = None  # {version, actions} with the refs
        self._surface_text: str | None = None
        self._lock = threading.Lock()
        self._connections: list[Connection] = []
        self._sequence = 0
        self._record_failed = False
        self.on_surface: Callable[[dict[str, Any]], None] | None = None

    def attach(self, make: Callable[[int], _C]) -> _C:
        """The connection ``make`` builds given its number (one session file each), kept to
        be told when the surface changes."""
        with self._lock:
            self._sequence += 1
            connection = make(self._sequence)
            self._connections.append(connection)
        return connection

    def disconnect(self, connection: Connection) -> None:
        with self._lock:
            if connection in self._connections:
                self._connections.remove(connection)

    def surface_changed(self) -> int:
        """Tell every initialized client to list its tools again; how many were told."""
        with self._lock:
            connections = [c for c in self._connections if c.initialized]
        for connection in connections:
            connection.notify_list_changed()
        return len(connections)

    def keep_surface(self, surface: dict[str, Any]) -> None:
        """The live declared surface: kept in memory and as ``STATE_DIR/surface.json``."""
        snapshot = live_surface_snapshot(surface["actions"])
        # The file keeps the tool fields, as `export` writes it; the surface compiled and
        # enforced against is the one `--surface surface.json` loads (ref and schema).
        exported = live_surface_snapshot(surface["actions"], tool_fields=True)
        text = file_text(exported, indent_depth=EXPORT_INDENT_DEPTH)
        with self._lock:
            self.surface = snapshot
            changed = text != self._surface_text
            self._surface_text = text
        if not changed:
            return
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            with state_lock(self.state_dir, _SURFACE_LOCK, "Timed out waiting for the surface"):
                write_file_atomic(state_surface_path(self.state_dir), text)
        except (OSError, StoreError) as error:
            proxy_notice(f"entropy: proxy: cannot keep the surface in {self.state_dir}: {error}")
        if self.on_surface is not None:
            self.on_surface(snapshot)

    def lost_records(self, count: int, error: OSError | None) -> None:
        """``count`` trace records the disk refused: counted, and said once per proxy (a
        full disk would otherwise print a line per call; the total is said at the end)."""
        with self._lock:
            self.stats.unrecorded += count
            first = error is not None and not self._record_failed
            self._record_failed = self._record_failed or first
        if first:
            proxy_notice(
                f"entropy: proxy: cannot record to {self.record_dir}: {error};"
                " calls are still forwarded, the number not recorded is said at the end"
            )

    def unrecorded_said(self) -> bool:
        """At the proxy's end: how many calls were not recorded, when some were (the
        transport then exits 1)."""
        lost = self.stats.unrecorded
        if lost:
            calls = "call was" if lost == 1 else "calls were"
            proxy_notice(f"entropy: proxy: {lost} {calls} not recorded (in {self.record_dir})")
        return lost > 0

    def session_path(self, sequence: int) -> Path | None:
        if self.record_dir is None:
            return None
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        return self.record_dir / f"proxy-{stamp}-{os.getpid()}-{sequence}.jsonl"
