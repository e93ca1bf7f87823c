"""Which implementation the hot paths take: the fast internals (the default) or the plain ones.

Every fast path in the package computes exactly what the plain code beside it computes
(property tests compare the two on generated inputs) and the plain code stays the
specification. ``PYTEST_ENTROPY_PURE=1`` in the environment selects the plain code
everywhere; the package reads the variable when it is imported (``pytest_entropy/__init__``:
the core does no I/O), and tests switch with :func:`use_fast_paths`.

Some fast paths have a native kernel too: a C extension module (``_*_native.c`` beside the
Python it speeds up, built by ``hatch_build.py`` when the package is installed). A kernel is
used only while the fast paths are on and :func:`use_native_kernels` allows it, and only when
it was built: a machine without a compiler runs the Python fast path, with the same bytes.
"""

from __future__ import annotations

import functools
import importlib
import sys
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
    """Whether built native kernels may be used (with the fast paths on)."""
    return _switch["native"]


def use_native_kernels(enabled: bool) -> bool:
    """Allow (``True``) or refuse the native kernels; returns the previous choice."""
    previous = _switch["native"]
    _switch["native"] = bool(enabled)
    return previous


# The kernels read CPython 3.11's object layouts (hatch_build.py builds them only there): on
# 3.12 and 3.13 they abort the interpreter, so a kernel found on any other interpreter (a
# stale build in a checkout, a copied wheel) is never imported.
KERNEL_INTERPRETER = ("cpython", (3, 11))


def kernels_supported() -> bool:
    """Whether this interpreter is the one the native kernels are written for."""
    return (sys.implementation.name, tuple(sys.version_info[:2])) == KERNEL_INTERPRETER


@functools.cache
def _import_kernel(name: str) -> ModuleType | None:
    # A pure memo: whether the extension was built does not change within a process.
    try:
        return importlib.import_module("pytest_entropy." + name)
    except ImportError:
        return None


def kernel(name: str) -> ModuleType | None:
    """The native kernel ``name`` (``"ingest._guard_native"``) when it may be used, else None.

    Call sites ask once per object they build (a scanner, a tally), not per record, so a
    switch flipped by a test takes effect for the next object.
    """
    if not (_switch["fast"] and _switch["native"] and kernels_supported()):
        return None
    return _import_kernel(name)
