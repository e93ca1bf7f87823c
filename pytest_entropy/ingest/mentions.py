"""Which trace lines the compile's replay must decode: one RE2 search per batch of lines.

The replay reads only the trace lines that may mention a ref it checks
(``native._may_mention``, the plain rule: the line has a backslash, or one of the quoted
refs occurs in its bytes). Testing each quoted ref with ``in`` scans a line once per ref;
on the benchmark corpus, ten refs over 106,000 trace lines, that is most of the replay.
:func:`mention_lines` answers the same question for a whole batch with one RE2 alternation
of the literal byte strings, matched in Latin-1 mode so that a byte is a character and a
match is exactly a substring occurrence (RE2 runs it as one automaton; Python's ``re``
tries the alternatives one by one and is slower than the loop). The batch is joined by
newlines and the search resumes after the line it found: the Python work is per mentioning
line, not per line. A ref or a line may hold a newline byte itself (a trace line never does,
but the selection is exact for any bytes), so a match that runs past the end of the line it
starts in proves nothing: that one line is decided by the plain rule and the search resumes
after it (issue 26, item 21: ``"\n"`` matched across ``['"', '"']``). A set of refs RE2
cannot compile within its memory budget is selected by the plain rule, line by line.
``tests/property/test_mentions_native.py`` compares it with the plain rule on generated
lines.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = ["mention_lines"]

# RE2's memory budget for the automaton; a larger set of refs falls back to the plain loop.
_MAX_MEMORY: Final = 32 << 20


def mention_lines(
    mentions: tuple[bytes, ...], plain: Callable[[bytes, tuple[bytes, ...]], bool]
) -> Callable[[list[bytes]], set[int]]:
    """``batch -> {i for i, raw in enumerate(batch) if plain(raw, mentions)}``."""

    def plain_select(batch: list[bytes]) -> set[int]:
        return {i for i, raw in enumerate(batch) if plain(raw, mentions)}

    search = _compiled(mentions)
    return plain_select if search is None else _searched(search, mentions, plain)


def _searched(
    search: Callable[..., Any],
    mentions: tuple[bytes, ...],
    plain: Callable[[bytes, tuple[bytes, ...]], bool],
) -> Callable[[list[bytes]], set[int]]:
    """The batch selection with one RE2 ``search`` of the quoted refs (or a backslash)."""

    def select(batch: list[bytes]) -> set[int]:
        blob = b"\n".join(batch)
        found: set[int] = set()
        match = search(blob)
        if match is None:
            return found
        ends = list(itertools.accumulate(len(raw) + 1 for raw in batch))
        while match is not None:
            index = bisect.bisect_right(ends, match.start())
            # ends[index] - 1 is the offset of the newline that closes line ``index``.
            if match.end() < ends[index] or plain(batch[index], mentions):
                found.add(index)
            if index + 1 >= len(ends):
                break
            match = search(blob, ends[index])
        return found

    return select


def _compiled(mentions: tuple[bytes, ...]) -> Callable[..., Any] | None:
    try:
        import re2  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - google-re2 is a dependency
        return None
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    options.max_mem = _MAX_MEMORY
    options.log_errors = False
    pattern = b"|".join(re2.escape(needle) for needle in (b"\\", *mentions))
    try:
        return re2.compile(pattern, options=options).search  # type: ignore[no-any-return]
    except re2.error:
        return None
