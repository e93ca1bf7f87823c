"""Which implementation the hot paths take: the fast internals (the default) or the plain ones.

Every fast path in the package computes exactly what the plain code beside it computes
(property tests compare the two on generated inputs) and the plain code stays the
specification. ``PYTEST_ENTROPY_PURE=1`` in the environment selects the plain code
everywhere; the package reads the variable when it is imported (``pytest_entropy/__init__``:
the core does no I/O), and tests switch with :func:`use_fast_paths`.
"""

from __future__ import annotations

__all__ = ["PURE_ENVIRONMENT_VARIABLE", "fast_paths", "use_fast_paths"]

PURE_ENVIRONMENT_VARIABLE = "PYTEST_ENTROPY_PURE"
_switch = {"fast": True}


def fast_paths() -> bool:
    """Whether the fast internals are in use."""
    return _switch["fast"]


def use_fast_paths(enabled: bool) -> bool:
    """Select the fast internals (``True``) or the plain ones; returns the previous choice."""
    previous = _switch["fast"]
    _switch["fast"] = bool(enabled)
    return previous
