"""Files shipped with the package: the demo corpus and the certification fixtures.

A wheel carries the repository's top-level ``corpora/`` directory as package data
(``pytest_entropy/corpora``, see ``pyproject.toml``); an editable install or a source
checkout keeps it beside the package. :func:`corpora_path` finds either.
"""

from __future__ import annotations

from pathlib import Path

from pytest_entropy.core.errors import EntropyError

__all__ = ["corpora_path"]

# The package root (this module sits in its sources/ folder).
_PACKAGE = Path(__file__).resolve().parent.parent


def corpora_path(*parts: str) -> Path:
    """The shipped file ``corpora/<parts...>``, installed or in a source checkout.

    >>> corpora_path("certification", "fixtures.json").name
    'fixtures.json'
    """
    candidates = (_PACKAGE / "corpora", _PACKAGE.parent / "corpora")
    for base in candidates:
        path = base.joinpath(*parts)
        if path.exists():
            return path
    where = " or ".join(str(base) for base in candidates)
    raise EntropyError(f"shipped data corpora/{'/'.join(parts)} not found in {where}")
