"""The session format the running pytest session configured, for the assertion helpers.

``assert_no_entropy_increase(..., sessions=...)`` and :class:`EntropyMeter` read session
files the way ``--entropy-format`` (ini ``entropy_format``) says, like the
``entropy_sessions`` fixture, although they take no pytest config: the plugin pushes the
configured format here when pytest configures and pops it when pytest unconfigures (a
stack, so a pytest run inside a test, as ``pytester`` makes, restores the outer one).
Outside pytest the default is ``auto``, what ``pytest-entropy measure`` reads.
"""

from __future__ import annotations

from typing import Final

__all__ = ["configured_session_format", "pop_session_format", "push_session_format"]

_FORMATS: Final[list[str]] = []


def push_session_format(session_format: str) -> None:
    """Make ``session_format`` the default of the assertion helpers (the plugin calls it)."""
    _FORMATS.append(session_format)


def pop_session_format() -> None:
    """Restore the default that held before the last :func:`push_session_format`."""
    if _FORMATS:
        _FORMATS.pop()


def configured_session_format() -> str:
    """The format the running pytest session configured, else ``auto``."""
    return _FORMATS[-1] if _FORMATS else "auto"
