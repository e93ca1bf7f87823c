"""Typed errors. Every message a user can see is built here, so tests can match it."""

from __future__ import annotations

__all__ = ["EntropyError", "EntropyInputError"]


class EntropyError(Exception):
    """Base class of every error this package raises on purpose."""


class EntropyInputError(EntropyError):
    """An input file or value that cannot be used, with where and what.

    >>> str(EntropyInputError("not valid JSON", source="surface.json", line=3))
    'surface.json:3: not valid JSON'
    """

    def __init__(self, problem: str, *, source: str | None = None, line: int | None = None):
        self.problem = problem
        self.source = source
        self.line = line
        where = source or ""
        if source is not None and line is not None:
            where = f"{source}:{line}"
        super().__init__(f"{where}: {problem}" if where else problem)
