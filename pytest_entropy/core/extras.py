"""Optional dependencies: the error that names the extra a missing one comes with.

The base install holds only what measuring needs (issue 32); a helper that needs more (the
hypothesis strategies, the syrupy extension, YAML configuration, the rich progress bar) says
which extra to install instead of failing with a bare ``ModuleNotFoundError``.
"""

from __future__ import annotations

__all__ = ["MissingExtraError", "extra_hint", "missing_extra"]


def extra_hint(extra: str) -> str:
    """The install command for ``extra``: ``pip install "pytest-entropy[yaml]"``."""
    return f'pip install "pytest-entropy[{extra}]"'


class MissingExtraError(ImportError):
    """An optional dependency is not installed; ``extra`` names the extra that brings it."""

    def __init__(self, needed_for: str, module: str, extra: str) -> None:
        super().__init__(
            f"{needed_for} needs {module}, which is not installed: {extra_hint(extra)}",
            name=module,
        )
        self.extra = extra


def missing_extra(
    error: ModuleNotFoundError, module: str, extra: str, needed_for: str
) -> ImportError:
    """The error to raise for ``error``: a :class:`MissingExtraError` when it is ``module``
    itself that is missing, else ``error`` unchanged (a broken install is not a missing
    extra, and says so itself)."""
    missing = (error.name or "").partition(".")[0]
    if missing != module.partition(".")[0]:
        return error
    return MissingExtraError(needed_for, module, extra)
