"""Regular expressions compiled at their first use.

A module-level ``re.compile`` runs on every import of its module, whether or not the run ever
matches the pattern: the session format detectors alone compiled eighteen on every command
that reads a session, though a native file (the demo's, a fabric trace's) returns from each
detector before its first search. :class:`LazyPattern` holds the source and compiles it at
its first ``search``, ``match``, ``sub`` or ``findall`` (issue 32: a command pays for what it uses).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pytest_entropy.core.typing_lite import AnyStr, Generic

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["LazyPattern"]


class LazyPattern(Generic[AnyStr]):
    """``re.compile(source, flags)``, compiled the first time it is used."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: AnyStr, flags: int = 0) -> None:
        self._source: AnyStr = source
        self._flags = flags
        self._compiled: re.Pattern[AnyStr] | None = None

    @property
    def compiled(self) -> re.Pattern[AnyStr]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._source, self._flags)
        return compiled

    def search(self, data: AnyStr) -> re.Match[AnyStr] | None:
        return self.compiled.search(data)

    def match(self, data: AnyStr) -> re.Match[AnyStr] | None:
        return self.compiled.match(data)

    def sub(
        self, replacement: AnyStr | Callable[[re.Match[AnyStr]], AnyStr], data: AnyStr
    ) -> AnyStr:
        return self.compiled.sub(replacement, data)

    def findall(self, data: AnyStr) -> list[Any]:
        return self.compiled.findall(data)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source!r})"
