"""``proxy --compile``: the watch loop's compile over the proxy's own recordings.

Nothing here compiles: :class:`~pytest_entropy.run.watch.CompileLoop` does the tick (window,
pool, gate, replay, exactly as ``watch``) and :class:`~pytest_entropy.run.watch.Watcher` the
triggers. This module only starts them once the server has listed its tools (a compile needs
the declared surface), hands them each new listing, and, when a compile changes the
effective surface, tells the connected clients to list again. The artifact itself is picked
up by the proxy's :class:`~pytest_entropy.run.proxy.ArtifactHolder` on the next message, so
no connection is dropped.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.run.proxy import ProxyHub
from pytest_entropy.run.proxy_artifact import proxy_notice
from pytest_entropy.run.watch import CompileLoop, Notice, Watcher
from pytest_entropy.sources.locate import directory_session_files

__all__ = ["LiveCompile"]


class LiveCompile:
    """The background compile of one proxy (started by the first tools/list)."""

    def __init__(
        self,
        hub: ProxyHub,
        sessions: Path,
        *,
        window: int,
        grace_seconds: float,
        poll_seconds: float,
        use_inotify: bool,
        redact_values: bool,
    ) -> None:
        self.hub = hub
        self.sessions = sessions
        self.window = window
        self.grace_seconds = grace_seconds
        self.poll_seconds = poll_seconds
        self.use_inotify = use_inotify
        self.redact_values = redact_values
        self.loop: CompileLoop | None = None
        self.watcher: Watcher | None = None
        self.notices: list[Notice] = []
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        hub.on_surface = self.surface_listed

    def surface_listed(self, surface: dict[str, Any]) -> None:
        """A new listing: compile against it from now on (and start, the first time)."""
        with self._lock:
            version = self.hub.artifact.metric_version
            if self.loop is not None:
                self.loop.surface = surface
                self.loop.options = ReadOptions(surface=surface, metric_version=version)
                return
            self.sessions.mkdir(parents=True, exist_ok=True)
            self.loop = CompileLoop(
                window=lambda: directory_session_files(self.sessions, self.window),
                surface=surface,
                state_dir=self.hub.state_dir,
                options=ReadOptions(surface=surface, metric_version=version),
                redact_values=self.redact_values,
                metric_version=version,
            )
            self.watcher = Watcher(
                self.loop,
                [self.sessions],
                self.notify,
                grace_seconds=self.grace_seconds,
                poll_seconds=self.poll_seconds,
                use_inotify=self.use_inotify,
            )
            self._thread = threading.Thread(
                target=self.watcher.run,
                kwargs={"initial_tick": True},
                name="entropy-proxy-compile",
                daemon=True,
            )
            self._thread.start()

    def notify(self, notice: Notice) -> None:
        self.notices.append(notice)
        proxy_notice(notice.text)
        # Under metric v3 the listed tools never change (normal forms act on calls only).
        if notice.kind == "compiled" and self.hub.artifact.metric_version < 3:
            self.hub.surface_changed()

    def stop(self) -> None:
        """Stop watching; a compile in progress finishes first."""
        if self.watcher is not None:
            self.watcher.stop()
        if self._thread is not None:
            self._thread.join(timeout=30)
