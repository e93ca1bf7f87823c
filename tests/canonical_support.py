"""The canonical writer with its shortcuts off, for tests that compare the two routes.

``core/canonical.py`` writes most values through the Rust core (``python_writer.rs``) or,
without it, through exact shortcuts (the recursive writer, the literal of a string that
needs no escape, the printable-ASCII collation key), and falls back to its general routes
(the iterative writer, the escaping of the json module, ICU) for the rest.
:func:`general_routes` runs a block with the core switched off and every shortcut replaced
by its general route, so a test can compare the two on any value: where the core is built
that compares the native writer with the plain one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pytest_entropy.core import canonical
from pytest_entropy.core.native_core import use_native_core

__all__ = ["general_routes"]


def _forget_orders() -> None:
    canonical._ordered_key_set.cache_clear()
    canonical._key_entries.cache_clear()


@contextmanager
def general_routes() -> Iterator[None]:
    """Run a block with the canonical writer's shortcuts off (see the module)."""
    replaced: dict[str, Any] = {
        "_write_compact": canonical._write_general,
        "json_string": canonical._plain_json_string,
        "ascii_collation_key": canonical.collation_sort_key,
    }
    saved = {name: getattr(canonical, name) for name in replaced}
    _forget_orders()
    for name, route in replaced.items():
        setattr(canonical, name, route)
    native = use_native_core(False)
    try:
        yield
    finally:
        use_native_core(native)
        for name, route in saved.items():
            setattr(canonical, name, route)
        _forget_orders()
