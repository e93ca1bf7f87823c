"""The Rust core (``pytest_entropy._core``, built from ``native/``): whether it is in use.

This is the one module that imports the extension. Everything else asks :func:`core`, which
returns the module, or ``None`` where the plain Python runs instead: the extension is not
installed (a pure wheel, a machine without Rust), ``PYTEST_ENTROPY_PURE=1`` was set when the
package was imported, or a test switched it off with :func:`use_native_core`. The plain
Python in ``core/`` and ``ingest/`` is the specification; the Rust core gives its bytes.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

__all__ = ["core", "core_available", "native_core_enabled", "use_native_core"]

_switch = {"native": True}


@functools.cache
def _import_core() -> ModuleType | None:
    # Whether the extension is installed does not change within a process.
    try:
        return importlib.import_module("pytest_entropy._core")
    except ImportError:
        return None


def core_available() -> bool:
    """Whether the extension is installed and importable here (whatever the switch says)."""
    return _import_core() is not None


def native_core_enabled() -> bool:
    """Whether the Rust core may be used (it still has to be installed)."""
    return _switch["native"]


def use_native_core(enabled: bool) -> bool:
    """Allow (``True``) or refuse the Rust core; returns the previous choice."""
    previous = _switch["native"]
    _switch["native"] = bool(enabled)
    return previous


def core() -> ModuleType | None:
    """The Rust core when it is installed and allowed, else ``None`` (the plain path)."""
    if not _switch["native"]:
        return None
    return _import_core()
