"""Session files on disk: discovery, windows and per-file scans (spec §4.2, §9.3).

Every file is scanned alone with its own model cursor. Reads stream line by line; a file is
never held in memory whole.
"""

from __future__ import annotations

import os
from pathlib import Path

from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.sources.locate import (
    DEFAULT_WINDOW,
    SessionFile,
    _newest_first,
    _session_files_in,
)


def agent_dir_from_env() -> Path:
    """The Pi agent directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    configured = os.environ.get("PI_CODING_AGENT_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".pi" / "agent"


def encode_project_dir(cwd: str | os.PathLike[str]) -> str:
    """Pi's session directory name for a working directory.

    Pi strips one leading separator and turns every ``/``, ``\\`` and ``:`` into ``-``,
    wrapped in ``--``: ``/home/me/app`` -> ``--home-me-app--``.
    """
    resolved = os.path.abspath(os.fspath(cwd))
    if resolved[:1] in ("/", "\\"):
        resolved = resolved[1:]
    for separator in ("/", "\\", ":"):
        resolved = resolved.replace(separator, "-")
    return f"--{resolved}--"


def project_session_files(
    agent_dir: Path, cwd: str | os.PathLike[str], limit: int = DEFAULT_WINDOW
) -> list[SessionFile]:
    """The current project's newest session files (spec §4.2), newest first."""
    directory = agent_dir / "sessions" / encode_project_dir(cwd)
    return _newest_first(_session_files_in(directory))[: max(1, limit)]


def machine_session_files(
    agent_dir: Path, cwd: str | os.PathLike[str] | None, limit: int = DEFAULT_WINDOW
) -> list[SessionFile]:
    """The machine-wide window (spec §4.2): newest files across every project, with the
    current project's newest file always included."""
    root = agent_dir / "sessions"
    try:
        projects = sorted(
            (entry.name for entry in os.scandir(root) if entry.is_dir()), key=code_unit_key
        )
    except OSError:
        return []
    files: list[SessionFile] = []
    for project in projects:
        files.extend(_session_files_in(root / project))
    window = max(1, limit)
    selected = _newest_first(files)[:window]
    if cwd is not None:
        current = project_session_files(agent_dir, cwd, 1)
        if current and all(item.path != current[0].path for item in selected):
            selected = _newest_first([*selected[: window - 1], current[0]])
    return selected
