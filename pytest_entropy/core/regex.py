"""Schema regular expressions on a linear-time engine (RE2), so no pattern can hang a replay.

JSON Schema's ``pattern`` and ``patternProperties`` are ECMAScript regular expressions that
the tool author (or an imported artifact) controls. Python's backtracking ``re`` can take
exponential time on patterns such as ``^(a+)+$``; RE2 guarantees time linear in the input.
RE2 also reads ``\\d`` and ``\\w`` as ASCII, as JavaScript does without the ``u`` flag.

Patterns RE2 cannot compile (lookarounds, backreferences) are not enforced: the value is
accepted and the pattern recorded (:func:`watch_unenforced`), never a rejection — a
replay gate must not fail on a pattern we cannot evaluate safely.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from functools import cache

from pytest_entropy.core.plain_record import Record, field

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "UNSUPPORTED",
    "Unenforced",
    "collect_unsupported_patterns",
    "js_pattern_search",
    "note_external_ref",
    "note_external_refs",
    "note_unsupported_patterns",
    "pattern_search",
    "watch_unenforced",
]

UNSUPPORTED: Final = None
_CACHE_LIMIT: Final = 1024
# A memo of a pure function (pattern -> compiled RE2 or UNSUPPORTED): it never changes a
# result, only how often RE2 compiles the same text.
_compiled: OrderedDict[str, Any] = OrderedDict()


class Unenforced(Record):
    """What one evaluation met and could not enforce: schema patterns RE2 cannot run and
    ``$ref`` targets outside their schema (never fetched). Both are accepted, never a
    rejection; the caller reports them with its result."""

    patterns: set[str] = field(default_factory=set)
    refs: set[str] = field(default_factory=set)

    def update(self, other: Unenforced) -> None:
        self.patterns.update(other.patterns)
        self.refs.update(other.refs)


# The record of the evaluation running in this context (thread, task), set only inside
# watch_unenforced(): the core keeps no record of its own between calls.
_watching: ContextVar[Unenforced | None] = ContextVar("pytest_entropy_unenforced", default=None)


@contextmanager
def watch_unenforced() -> Iterator[Unenforced]:
    """Gather what the block meets and cannot enforce into the yielded record.

    Blocks nest: what an inner block met is part of the enclosing block's record too. Outside
    any block, what is met goes unrecorded (a lone ``accepts`` call still answers).
    """
    outer = _watching.get()
    found = Unenforced()
    token = _watching.set(found)
    try:
        yield found
    finally:
        _watching.reset(token)
        if outer is not None:
            outer.update(found)


def note_unsupported_patterns(patterns: Iterable[str]) -> None:
    """Add patterns met elsewhere (another process's share) to the running block's record."""
    found = _watching.get()
    if found is not None:
        found.patterns.update(patterns)


def note_external_refs(refs: Iterable[str]) -> None:
    """Add external refs met elsewhere to the running block's record."""
    found = _watching.get()
    if found is not None:
        found.refs.update(refs)


@contextmanager
def _collect_patterns() -> Iterator[set[str]]:
    with watch_unenforced() as found:
        yield found.patterns


def collect_unsupported_patterns() -> AbstractContextManager[set[str]]:
    """The unsupported patterns met inside the block, gathered into the yielded set."""
    return _collect_patterns()


@cache
def _re2_options() -> Any:
    import re2  # type: ignore[import-untyped]

    options = re2.Options()
    options.log_errors = False  # a refused pattern is counted, not printed to stderr
    return options


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
        found = _watching.get()
        if found is not None:
            found.patterns.add(pattern)  # recorded at every use: a report covers what it met
        return None
    return compiled.search(text) is not None


def js_pattern_search(pattern: str, text: str) -> bool | None:
    """Whether the JavaScript ``u``-mode ``pattern`` matches anywhere in ``text``, run on RE2
    in its RE2 spelling (:func:`~pytest_entropy.core.js_regex.re2_spelling`); ``None`` (and
    ``pattern`` recorded) if RE2 cannot run it."""
    from pytest_entropy.core.js_regex import re2_spelling

    compiled = _compile(re2_spelling(pattern))
    if compiled is UNSUPPORTED:
        found = _watching.get()
        if found is not None:
            found.patterns.add(pattern)
        return None
    return compiled.search(text) is not None


def note_external_ref(uri: str) -> None:
    """Record one ref outside its schema in the running block's record (core.validation)."""
    found = _watching.get()
    if found is not None:
        found.refs.add(uri)
