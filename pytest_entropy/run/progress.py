"""How far a corpus read has come, for whoever shows it (the CLI's progress bar).

The pipeline reports to a :class:`ProgressSink` on the client, as the parts merge in source
order: how many files and bytes are done, and, on the Dask engine, how many workers run and
where the cluster's dashboard is. A sink only watches; nothing it does changes a result, and
without one (the default everywhere but an interactive terminal) nothing is reported.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from pytest_entropy.core.typing_lite import Protocol
from pytest_entropy.sources.urls import is_url

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ProgressSink", "tracked_merge"]


class ProgressSink(Protocol):
    """Receives a corpus read's progress; every method is called on the client only."""

    def begin(self, files: int, total_bytes: int | None) -> None:
        """The read starts: ``files`` files, ``total_bytes`` (``None``: unknown, as for URLs)."""

    def advance(self, files: int, done_bytes: int) -> None:
        """``files`` more files (``done_bytes`` of them) have been read and merged."""

    def cluster(self, workers: int, dashboard: str | None) -> None:
        """The Dask engine runs on ``workers`` workers; ``dashboard`` is its address, if any."""

    def end(self) -> None:
        """The read is over (also when it failed)."""


def _size(location: str) -> int | None:
    if is_url(location):
        return None  # a URL's size would cost a round trip per object: not worth a bar
    try:
        return os.stat(location).st_size
    except OSError:
        return None


def tracked_merge(
    sources: Sequence[Any],
    merge: Callable[[Any, Any], Any],
    sink: ProgressSink,
) -> Callable[[Any, Any], Any]:
    """``merge`` that reports each merged part's files (and their bytes) to ``sink``.

    ``sources`` are the read's :class:`~pytest_entropy.run.corpus.SourceFile` items; a part
    names its files in ``readable``, ``unreadable`` and ``changed``.
    """
    sizes = {source.location: _size(source.location) for source in sources}
    each = [sizes[source.location] for source in sources]  # a file listed twice counts twice
    known = [size for size in each if size is not None]
    sink.begin(len(sources), sum(known) if len(known) == len(each) else None)

    def merged(accumulator: Any, part: Any) -> Any:
        locations = [source.location for source, _ in part.readable]
        locations += [source.location for source in part.unreadable]
        locations += list(part.changed)
        result = merge(accumulator, part)
        sink.advance(len(locations), sum(sizes.get(where) or 0 for where in locations))
        return result

    return merged
