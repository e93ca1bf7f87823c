"""Schema regular expressions on a linear-time engine (RE2), so no pattern can hang a replay.

JSON Schema's ``pattern`` and ``patternProperties`` are ECMAScript regular expressions that
the tool author (or an imported artifact) controls. Python's backtracking ``re`` can take
exponential time on patterns such as ``^(a+)+$``; RE2 guarantees time linear in the input.
RE2 also reads ``\\d`` and ``\\w`` as ASCII, as JavaScript does without the ``u`` flag.

Patterns RE2 cannot compile (lookarounds, backreferences) are not enforced: the value is
accepted and the pattern counted (:func:`unsupported_patterns`), never a rejection — a
replay gate must not fail on a pattern we cannot evaluate safely.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Final

__all__ = [
    "UNSUPPORTED",
    "collect_unsupported_patterns",
    "note_unsupported_patterns",
    "pattern_search",
    "reset_unsupported_patterns",
    "unsupported_patterns",
]

UNSUPPORTED: Final = None
_CACHE_LIMIT: Final = 1024
_compiled: OrderedDict[str, Any] = OrderedDict()


class Sightings:
    """What a replay met and could not enforce (patterns RE2 cannot run, refs outside the
    schema), recorded at every use so a report covers what it evaluated.

    ``collect()`` gathers what one block met into a set of its own while the record keeps
    everything, so a worker that runs many tasks reports each task's share.
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def add(self, item: str) -> None:
        self._seen.add(item)

    def update(self, items: Iterable[str]) -> None:
        self._seen.update(items)

    def clear(self) -> None:
        self._seen.clear()

    def sorted(self) -> list[str]:
        return sorted(self._seen)

    @contextmanager
    def collect(self) -> Iterator[set[str]]:
        saved = set(self._seen)
        self._seen.clear()
        found: set[str] = set()
        try:
            yield found
        finally:
            found.update(self._seen)
            self._seen.update(saved)


_unsupported = Sightings()
_options: list[Any] = []


def _re2_options() -> Any:
    if not _options:
        import re2  # type: ignore[import-untyped]

        options = re2.Options()
        options.log_errors = False  # a refused pattern is counted, not printed to stderr
        _options.append(options)
    return _options[0]


def _compile(pattern: str) -> Any:
    found = _compiled.get(pattern, False)
    if found is not False:
        _compiled.move_to_end(pattern)
        return found
    import re2

    try:
        compiled: Any = re2.compile(pattern, _re2_options())
    except Exception:
        compiled = UNSUPPORTED
    _compiled[pattern] = compiled
    if len(_compiled) > _CACHE_LIMIT:
        _compiled.popitem(last=False)
    return compiled


def pattern_search(pattern: str, text: str) -> bool | None:
    """Whether ``pattern`` matches anywhere in ``text``; ``None`` if RE2 cannot run it."""
    compiled = _compile(pattern)
    if compiled is UNSUPPORTED:
        _unsupported.add(pattern)  # recorded at every use: a report covers what it evaluated
        return None
    return compiled.search(text) is not None


def unsupported_patterns() -> list[str]:
    """The patterns seen so far that RE2 could not compile (and were therefore not enforced)."""
    return _unsupported.sorted()


def reset_unsupported_patterns() -> None:
    _unsupported.clear()


def note_unsupported_patterns(patterns: Iterable[str]) -> None:
    """Record patterns another process found unsupported (a worker's, merged by the client)."""
    _unsupported.update(patterns)


def collect_unsupported_patterns() -> AbstractContextManager[set[str]]:
    """The unsupported patterns met inside the block, gathered into the yielded set.

    A worker process runs many tasks (of many runs, on a shared cluster); each task reports
    only what it met itself. The process-wide record keeps everything as before.
    """
    return _unsupported.collect()
