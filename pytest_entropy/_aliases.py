"""The module paths of the first layout, kept as aliases of their new homes.

The first wave's modules sat side by side at the top of the package
(``pytest_entropy.assertions``, ``pytest_entropy.store``, ...) and users' tests import them.
Revision 2 of the layout moved each into the folder of its layer; this finder answers an
import of an old path with the module that now lives elsewhere (the same module object, so
``isinstance`` checks and monkeypatching agree). Nothing is imported until it is asked for.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

# old name (under pytest_entropy.) -> new name
MODULE_ALIASES = {
    "assertions": "testing.assertions",
    "certification": "run.certification",
    "config": "state.config",
    "distributed": "run.compile",
    "engine": "run.executor",
    "fixtures": "pytest.fixtures",
    "incremental": "sources.incremental",
    "options": "state.config",
    "ratchet": "testing.ratchet",
    "remote": "sources.urls",
    "render": "report.text",
    "resources": "sources.resources",
    "sessions": "sources.locate",
    "snapshot": "testing.snapshot",
    "store": "state.store",
    "strategies": "testing.strategies",
    "surfaces": "ingest.surfaces",
    "watch": "run.watch",
}

_PREFIX = __name__.rpartition(".")[0] + "."


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        # The import system re-reads sys.modules after this, so the alias resolves to the
        # real module object and the placeholder is dropped.
        sys.modules[module.__name__] = importlib.import_module(self.target)


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX):
            return None
        new = MODULE_ALIASES.get(fullname[len(_PREFIX) :])
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(_PREFIX + new))


def install() -> None:
    """Put the alias finder on ``sys.meta_path`` once."""
    if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
