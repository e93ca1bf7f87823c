"""The tool-author API: assertions, ratchet baselines, the life-cycle helper, the syrupy
extension and hypothesis strategies.

``pytest_entropy.testing.walk_ratchet_life_cycle`` (the life-cycle helper, which needs
pytest's ``pytester``) resolves on first use, so importing a sibling module such as
``pytest_entropy.testing.assertions`` never imports pytest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_entropy.testing.lifecycle import LifeCycleStep, walk_ratchet_life_cycle

__all__ = ["LifeCycleStep", "walk_ratchet_life_cycle"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from pytest_entropy.testing import lifecycle

        return getattr(lifecycle, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
