"""Every directory layout pytest-entropy knows, in one place.

* the Pi agent directory (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``): sessions under
  ``sessions/<encoded project>/``, the entropy state under ``fabric/entropy/`` (with the
  exported ``surface.json``), the repair table at ``fabric/repairs/current.json``;
* a project's own state directory, ``.entropy/`` (``compiled.json``,
  ``observation-pool.json``, ``surface.json``).

Every command, the watch loop, the certification and the fronts ask here; nothing else
spells these paths. The windows over a Pi agent directory's sessions (spec §4.2) are here
too. Every file is scanned alone with its own model cursor; reads stream line by line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.sources.locate import (
    DEFAULT_WINDOW,
    SessionFile,
    _newest_first,
    _session_files_in,
)

__all__ = [
    "EXPORTED_SURFACE",
    "STATE_DIRNAME",
    "agent_dir_from_env",
    "agent_repairs_path",
    "agent_sessions_dir",
    "agent_state_dir",
    "agent_surface_path",
    "default_state_dir",
    "encode_project_dir",
    "machine_session_files",
    "project_session_files",
    "project_sessions_dir",
]

# A project's state directory, under its working directory.
STATE_DIRNAME: Final = ".entropy"
# The surface snapshot a state directory holds (``export`` writes it; status and watch
# read a Pi agent directory's as the default surface).
EXPORTED_SURFACE: Final = "surface.json"


def agent_dir_from_env() -> Path:
    """The Pi agent directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    configured = os.environ.get("PI_CODING_AGENT_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".pi" / "agent"


def default_state_dir(cwd: str | os.PathLike[str] | None = None) -> Path:
    """``.entropy/`` under the current (or given) directory."""
    return Path(cwd if cwd is not None else os.getcwd()) / STATE_DIRNAME


def agent_state_dir(agent_dir: str | os.PathLike[str]) -> Path:
    """Where a Pi agent directory keeps its entropy state."""
    return Path(agent_dir) / "fabric" / "entropy"


def agent_surface_path(agent_dir: str | os.PathLike[str]) -> Path:
    """The surface snapshot exported into a Pi agent directory's state."""
    return agent_state_dir(agent_dir) / EXPORTED_SURFACE


def agent_repairs_path(agent_dir: str | os.PathLike[str]) -> Path:
    """Where a Pi agent directory keeps its repair table."""
    return Path(agent_dir) / "fabric" / "repairs" / "current.json"


def agent_sessions_dir(agent_dir: str | os.PathLike[str]) -> Path:
    """The root of a Pi agent directory's sessions (one directory per project)."""
    return Path(agent_dir) / "sessions"


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


def project_sessions_dir(agent_dir: str | os.PathLike[str], cwd: str | os.PathLike[str]) -> Path:
    """The session directory of the project at ``cwd`` in a Pi agent directory."""
    return agent_sessions_dir(agent_dir) / encode_project_dir(cwd)


def project_session_files(
    agent_dir: Path, cwd: str | os.PathLike[str], limit: int = DEFAULT_WINDOW
) -> list[SessionFile]:
    """The current project's newest session files (spec §4.2), newest first."""
    directory = project_sessions_dir(agent_dir, cwd)
    return _newest_first(_session_files_in(directory))[: max(1, limit)]


def machine_session_files(
    agent_dir: Path, cwd: str | os.PathLike[str] | None, limit: int = DEFAULT_WINDOW
) -> list[SessionFile]:
    """The machine-wide window (spec §4.2): newest files across every project, with the
    current project's newest file always included."""
    root = agent_sessions_dir(agent_dir)
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
