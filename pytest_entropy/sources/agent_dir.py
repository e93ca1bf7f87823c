"""Every directory layout pytest-entropy knows, in one place.

* the Pi agent directory (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``): sessions under
  ``sessions/<encoded project>/``, the entropy state under ``fabric/entropy/`` (with the
  exported ``surface.json``), the repair table at ``fabric/repairs/current.json``;
* Claude Code's directory (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``): transcripts under
  ``projects/<encoded project>/*.jsonl`` (each session's subagents in
  ``<session>/subagents/``). We never write there: its state is the project's ``.entropy/``;
* a project's own state directory, ``.entropy/`` (``compiled.json``,
  ``observation-pool.json``, ``surface.json``), with a ``.gitignore`` holding ``*`` written
  when the directory is created (as ``.pytest_cache`` does), so the pool's verbatim argument
  values are never committed by accident.

Every command, the watch loop, the certification and the fronts ask here; nothing else
spells these paths. The windows over a Pi agent directory's sessions (spec §4.2) are here
too. Every file is scanned alone with its own model cursor; reads stream line by line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
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
    "AGENT_KINDS",
    "CLAUDE_CODE",
    "EXPORTED_SURFACE",
    "PI",
    "STATE_DIRNAME",
    "AgentLayout",
    "agent_dir_from_env",
    "agent_layout",
    "agent_repairs_path",
    "agent_sessions_dir",
    "agent_state_dir",
    "agent_surface_path",
    "claude_dir_from_env",
    "default_state_dir",
    "detect_agent_kind",
    "encode_claude_project_dir",
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
PI: Final = "pi"
CLAUDE_CODE: Final = "claude-code"
AGENT_KINDS: Final = (PI, CLAUDE_CODE)


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


def claude_dir_from_env() -> Path:
    """Claude Code's directory: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".claude"


def encode_claude_project_dir(cwd: str | os.PathLike[str]) -> str:
    """Claude Code's transcript directory name for a working directory: every character
    but ``A-Z``, ``a-z`` and ``0-9`` becomes ``-`` (``/home/u/my.proj`` ->
    ``-home-u-my-proj``; see docs/decisions.md)."""
    return re.sub(r"[^A-Za-z0-9]", "-", os.path.abspath(os.fspath(cwd)))


def detect_agent_kind(agent_dir: str | os.PathLike[str]) -> str:
    """``claude-code`` for a directory laid out as Claude Code's (``projects/`` and no Pi
    ``sessions/`` or ``fabric/``), else ``pi``."""
    root = Path(agent_dir)
    if (root / "sessions").is_dir() or (root / "fabric").is_dir():
        return PI
    return CLAUDE_CODE if (root / "projects").is_dir() else PI


@dataclass(frozen=True, slots=True)
class AgentLayout:
    """One agent directory and its layout: where sessions are, where state goes."""

    root: Path
    kind: str

    @property
    def sessions_root(self) -> Path:
        """The directory holding one directory per project."""
        return self.root / ("projects" if self.kind == CLAUDE_CODE else "sessions")

    @property
    def session_format(self) -> str:
        """How the layout's session files are read when ``--format`` is ``auto``."""
        return CLAUDE_CODE if self.kind == CLAUDE_CODE else "fabric"

    def project_dir(self, cwd: str | os.PathLike[str]) -> Path:
        """The session directory of the project at ``cwd``."""
        if self.kind == CLAUDE_CODE:
            return self.sessions_root / encode_claude_project_dir(cwd)
        return self.sessions_root / encode_project_dir(cwd)

    def state_dir(self, cwd: str | os.PathLike[str] | None = None) -> Path:
        """Pi's ``fabric/entropy/``; for Claude Code the project's ``.entropy/`` (never
        Claude Code's own directory)."""
        if self.kind == CLAUDE_CODE:
            return default_state_dir(cwd)
        return agent_state_dir(self.root)

    def surface_path(self, cwd: str | os.PathLike[str] | None = None) -> Path:
        """The exported surface snapshot the layout's state holds."""
        return self.state_dir(cwd) / EXPORTED_SURFACE

    def repairs_path(self) -> Path | None:
        """Pi's repair table (Claude Code has none)."""
        return None if self.kind == CLAUDE_CODE else agent_repairs_path(self.root)


def agent_layout(agent_dir: str | os.PathLike[str], kind: str | None = None) -> AgentLayout:
    """The layout of ``agent_dir``: ``kind`` when given, else detected."""
    if kind is not None and kind not in AGENT_KINDS:
        raise ValueError(f"unknown agent kind {kind!r}")
    return AgentLayout(Path(agent_dir), kind or detect_agent_kind(agent_dir))


def project_sessions_dir(agent_dir: str | os.PathLike[str], cwd: str | os.PathLike[str]) -> Path:
    """The session directory of the project at ``cwd`` in a Pi agent directory."""
    return agent_sessions_dir(agent_dir) / encode_project_dir(cwd)


def project_session_files(
    agent_dir: Path,
    cwd: str | os.PathLike[str],
    limit: int = DEFAULT_WINDOW,
    kind: str | None = PI,
) -> list[SessionFile]:
    """The current project's newest session files (spec §4.2), newest first."""
    directory = agent_layout(agent_dir, kind).project_dir(cwd)
    return _newest_first(_session_files_in(directory))[: max(1, limit)]


def machine_session_files(
    agent_dir: Path,
    cwd: str | os.PathLike[str] | None,
    limit: int = DEFAULT_WINDOW,
    kind: str | None = PI,
) -> list[SessionFile]:
    """The machine-wide window (spec §4.2): newest files across every project, with the
    current project's newest file always included. For Claude Code the files are each
    project's main transcripts (``projects/<project>/*.jsonl``)."""
    root = agent_layout(agent_dir, kind).sessions_root
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
        current = project_session_files(agent_dir, cwd, 1, kind)
        if current and all(item.path != current[0].path for item in selected):
            selected = _newest_first([*selected[: window - 1], current[0]])
    return selected
