"""Which implementation the hot paths take: the fast internals (the default) or the plain ones.

Every fast path in the package computes exactly what the plain code beside it computes
(property tests compare the two on generated inputs) and the plain code stays the
specification. ``PYTEST_ENTROPY_PURE=1`` in the environment selects the plain code
everywhere; the package reads the variable when it is imported (``pytest_entropy/__init__``:
the core does no I/O), and tests switch with :func:`use_fast_paths`.

The C kernels that once sat beside some fast paths are gone (issue 28: the Rust core,
``pytest_entropy._core`` through ``core/native_core.py``, replaces them). :func:`kernel`
still answers its callers, always with ``None``, so they take their Python fast path; the
``use_native_kernels`` switch (``PYTEST_ENTROPY_NO_NATIVE=1``) is still accepted and no
longer changes anything.
"""

from __future__ import annotations

from types import ModuleType

__all__ = [
    "PURE_ENVIRONMENT_VARIABLE",
    "fast_paths",
    "kernel",
    "native_kernels",
    "use_fast_paths",
    "use_native_kernels",
]

PURE_ENVIRONMENT_VARIABLE = "PYTEST_ENTROPY_PURE"
_switch = {"fast": True, "native": True}


def fast_paths() -> bool:
    """Whether the fast internals are in use."""
    return _switch["fast"]


def use_fast_paths(enabled: bool) -> bool:
    """Select the fast internals (``True``) or the plain ones; returns the previous choice."""
    previous = _switch["fast"]
    _switch["fast"] = bool(enabled)
    return previous


def native_kernels() -> bool:
    """Whether the (former) native kernels are allowed; nothing reads it now."""
    return _switch["native"]


def use_native_kernels(enabled: bool) -> bool:
    """Allow or refuse the (former) native kernels; returns the previous choice. Kept for
    ``PYTEST_ENTROPY_NO_NATIVE=1`` and old callers: it no longer changes any path."""
    previous = _switch["native"]
    _switch["native"] = bool(enabled)
    return previous


def kernel(name: str) -> ModuleType | None:
    """The C kernel ``name`` (``"ingest._guard_native"``): there are none now, so ``None``.

    Call sites take their Python fast path on ``None``, which gives the same bytes.
    """
    return None
