"""File names as text, for the paths a command walks without importing :mod:`pathlib`.

A command line names its files as strings, and a ``measure`` only joins, lists and opens
them. Importing :mod:`pathlib` for that was a tenth of a demo run's instructions (on 3.11
and 3.12 it imports :mod:`urllib.parse`, and that :mod:`ipaddress`; issue 32). These
helpers give the text pathlib gives (``str(Path(raw))``), so every name a message, a
diagnostic or a report shows stays as it was, and :func:`as_path` hands a real
:class:`pathlib.Path` to whoever was promised one (a registered format's detector, reader
or directory rule, a public function that returns paths).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is not imported on a command's way (issue 32)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import TypeVar

    # A path as given, kept in its kind: a str stays a str, a Path a Path.
    PathT = TypeVar("PathT", str, Path)

__all__ = ["as_path", "join_path", "normal_path", "path_like"]

_POSIX = os.name == "posix"


def normal_path(raw: str | os.PathLike[str]) -> str:
    """``str(pathlib.Path(raw))``: on POSIX without pathlib (repeated and trailing slashes
    and ``.`` components dropped, exactly two leading slashes kept, ``..`` kept, the empty
    path ``.``); elsewhere pathlib's own answer."""
    text = os.fspath(raw)
    if not _POSIX:
        return str(as_path(text))
    root = ""
    if text.startswith("/"):
        root = "//" if text.startswith("//") and not text.startswith("///") else "/"
    parts = [part for part in text.split("/") if part and part != "."]
    if not root and not parts:
        return "."
    return root + "/".join(parts)


def join_path(base: str | os.PathLike[str], name: str) -> str:
    """``str(pathlib.Path(base) / name)``."""
    return normal_path(os.path.join(base, name))


def as_path(raw: str | os.PathLike[str]) -> Path:
    """``raw`` as a :class:`pathlib.Path` (imported here, when a caller needs one)."""
    from pathlib import Path

    return raw if isinstance(raw, Path) else Path(raw)


def path_like(given: PathT, text: str) -> PathT:
    """``text`` in the kind of path ``given`` is: a str for a str (a command's way, which
    never imports pathlib), a :class:`pathlib.Path` for anything else."""
    if isinstance(given, str):
        return text
    return as_path(text)
