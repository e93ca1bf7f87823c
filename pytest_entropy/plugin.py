"""The pytest entry point ``entropy``: a shim over :mod:`pytest_entropy.pytest.plugin`.

pytest loads this module by name from the ``pytest11`` entry point; every hook and fixture
lives in the ``pytest/`` folder and is re-exported here (its ``__all__``, unchanged) so the
entry point keeps its name.
"""

from __future__ import annotations

from pytest_entropy.pytest import plugin as _implementation
from pytest_entropy.pytest.plugin import *  # noqa: F403

__all__ = list(_implementation.__all__)
