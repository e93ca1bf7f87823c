"""Every directory layout pytest-entropy knows, in one place.

* the Pi agent directory (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``): sessions under
  ``sessions/<encoded project>/``, the entropy state under ``fabric/entropy/`` (with the
  exported ``surface.json``), the repair table at ``fabric/repairs/current.json``;
* Claude Code's directory (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``): transcripts under
  ``projects/<encoded project>/*.jsonl`` (each session's subagents in
  ``<session>/subagents/``). We never write there: its state is the project's ``.entropy/``;
* Codex CLI's home (``$CODEX_HOME`` or ``~/.codex``): rollouts under
  ``sessions/YYYY/MM/DD/rollout-*.jsonl``, each naming its project in ``session_meta.cwd``;
* Gemini CLI's home (``~/.gemini``): chats under ``tmp/<project>/chats/session-*``, each
  naming its project by ``projectHash`` (the SHA-256 of the project root). Neither is ever
  written to: their state is the project's ``.entropy/``, as for Claude Code;
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

from pytest_entropy.core.canonical import sha256
from pytest_entropy.core.jscompat import code_unit_key
from pytest_entropy.sources.locate import (
    DEFAULT_WINDOW,
    SessionFile,
    _newest_first,
    _session_files_in,
    _stamp,
)

__all__ = [
    "AGENT_KINDS",
    "CLAUDE_CODE",
    "CODEX",
    "EXPORTED_SURFACE",
    "GEMINI_CLI",
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
    "gemini_project_hash",
    "machine_session_files",
    "project_session_files",
    "project_sessions_dir",
    "session_project",
    "state_sessions_dir",
    "state_surface_path",
]

# A project's state directory, under its working directory.
STATE_DIRNAME: Final = ".entropy"
# The surface snapshot a state directory holds (``export`` writes it; status and watch
# read a Pi agent directory's as the default surface).
EXPORTED_SURFACE: Final = "surface.json"
PI: Final = "pi"
CLAUDE_CODE: Final = "claude-code"
CODEX: Final = "codex"
GEMINI_CLI: Final = "gemini-cli"
AGENT_KINDS: Final = (PI, CLAUDE_CODE, CODEX, GEMINI_CLI)
# Kinds whose own directory is never written to: their state is the project's .entropy/.
_FOREIGN_KINDS: Final = frozenset({CLAUDE_CODE, CODEX, GEMINI_CLI})
_YEAR: Final = re.compile(r"\d{4}\Z")
# How much of a session file's head is read to find the project it belongs to.
_HEAD_BYTES: Final = 1 << 20


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


def state_sessions_dir(state_dir: str | os.PathLike[str]) -> Path:
    """Where a state directory keeps the sessions the MCP proxy records."""
    return Path(state_dir) / "sessions"


def state_surface_path(state_dir: str | os.PathLike[str]) -> Path:
    """A state directory's exported surface snapshot (``surface.json``)."""
    return Path(state_dir) / EXPORTED_SURFACE


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


def _is_codex_home(root: Path) -> bool:
    """Codex's ``sessions/`` holds year folders (Pi's holds encoded project names), and its
    home a ``config.toml``."""
    if (root / "config.toml").is_file():
        return True
    try:
        with os.scandir(root / "sessions") as entries:
            return any(entry.is_dir() and _YEAR.match(entry.name) for entry in entries)
    except OSError:
        return False


def detect_agent_kind(agent_dir: str | os.PathLike[str]) -> str:
    """The layout of an agent directory: ``pi`` when it has ``fabric/`` or Pi's
    ``sessions/``; ``codex`` when its ``sessions/`` holds year folders (or it has a
    ``config.toml``); ``claude-code`` with ``projects/``; ``gemini-cli`` with ``tmp/``;
    else ``pi``."""
    root = Path(agent_dir)
    if (root / "fabric").is_dir():
        return PI
    if (root / "sessions").is_dir():
        return CODEX if _is_codex_home(root) else PI
    if (root / "projects").is_dir():
        return CLAUDE_CODE
    return GEMINI_CLI if (root / "tmp").is_dir() else PI


def gemini_project_hash(cwd: str | os.PathLike[str]) -> str:
    """Gemini CLI's ``projectHash`` of a project root: the SHA-256 of its absolute path."""
    return sha256(os.path.abspath(os.fspath(cwd)).encode("utf-8")).hexdigest()


_CODEX_META: Final = re.compile(rb'"type"\s*:\s*"session_meta"')
_GEMINI_HASH: Final = re.compile(rb'"projectHash"\s*:\s*"([0-9a-f]{64})"')


def _head(path: Path) -> bytes:
    from pytest_entropy.ingest.base import open_session

    try:
        with open_session(path) as stream:
            data: bytes = stream.read(_HEAD_BYTES)
    except (OSError, EOFError):
        return b""
    return data


def session_project(path: Path, kind: str) -> str | None:
    """The project a Codex rollout (its ``session_meta.cwd``) or a Gemini CLI chat (its
    ``projectHash``) belongs to, read from the file's head; ``None`` when it names none."""
    head = _head(path)
    if kind == GEMINI_CLI:
        found = _GEMINI_HASH.search(head)
        return found.group(1).decode() if found else None
    from pytest_entropy.ingest.foreign import head_records

    for record in head_records(head, limit=4):
        if type(record) is dict and record.get("type") == "session_meta":
            payload = record.get("payload")
            cwd = payload.get("cwd") if type(payload) is dict else None
            return os.path.normpath(cwd) if type(cwd) is str and cwd else None
    return None


def _foreign_session_files(layout: AgentLayout) -> list[SessionFile]:
    """Every session file of a Codex or Gemini CLI home, by its format's directory rule."""
    from pytest_entropy.ingest.codex import codex_files
    from pytest_entropy.ingest.gemini_cli import gemini_cli_files

    rule = codex_files if layout.kind == CODEX else gemini_cli_files
    try:
        paths = rule(layout.sessions_root)
    except OSError:
        return []
    out: list[SessionFile] = []
    for path in paths:
        try:
            out.append(_stamp(path))
        except OSError:
            continue
    return out


def _project_key(layout: AgentLayout, cwd: str | os.PathLike[str]) -> str:
    if layout.kind == GEMINI_CLI:
        return gemini_project_hash(cwd)
    return os.path.normpath(os.path.abspath(os.fspath(cwd)))


@dataclass(frozen=True, slots=True)
class AgentLayout:
    """One agent directory and its layout: where sessions are, where state goes."""

    root: Path
    kind: str

    @property
    def sessions_root(self) -> Path:
        """The directory holding the sessions (Pi, Claude Code: one directory per project;
        Codex: ``sessions/YYYY/MM/DD``; Gemini CLI: ``tmp/<project>/chats``)."""
        if self.kind == CLAUDE_CODE:
            return self.root / "projects"
        if self.kind == GEMINI_CLI:
            return self.root / "tmp"
        return self.root / "sessions"

    @property
    def session_format(self) -> str:
        """How the layout's session files are read when ``--format`` is ``auto``."""
        return "fabric" if self.kind == PI else self.kind

    def project_dir(self, cwd: str | os.PathLike[str]) -> Path:
        """The session directory of the project at ``cwd`` (Codex keeps no such directory:
        its sessions root, whose rollouts are then told apart by their ``cwd``)."""
        if self.kind == CLAUDE_CODE:
            return self.sessions_root / encode_claude_project_dir(cwd)
        if self.kind == GEMINI_CLI:
            return self.sessions_root / gemini_project_hash(cwd) / "chats"
        if self.kind == CODEX:
            return self.sessions_root
        return self.sessions_root / encode_project_dir(cwd)

    def state_dir(self, cwd: str | os.PathLike[str] | None = None) -> Path:
        """Pi's ``fabric/entropy/``; for Claude Code, Codex and Gemini CLI the project's
        ``.entropy/`` (never the agent's own directory)."""
        if self.kind in _FOREIGN_KINDS:
            return default_state_dir(cwd)
        return agent_state_dir(self.root)

    def surface_path(self, cwd: str | os.PathLike[str] | None = None) -> Path:
        """The exported surface snapshot the layout's state holds."""
        return self.state_dir(cwd) / EXPORTED_SURFACE

    def repairs_path(self) -> Path | None:
        """Pi's repair table (the other agents have none)."""
        return None if self.kind in _FOREIGN_KINDS else agent_repairs_path(self.root)


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
    """The current project's newest session files (spec §4.2), newest first. Codex and
    Gemini CLI sessions belong to the project their own head names (``session_meta.cwd``,
    ``projectHash``), wherever they are stored."""
    layout = agent_layout(agent_dir, kind)
    if layout.kind in (CODEX, GEMINI_CLI):
        wanted = _project_key(layout, cwd)
        files = [
            item
            for item in _foreign_session_files(layout)
            if session_project(item.path, layout.kind) == wanted
        ]
        return _newest_first(files)[: max(1, limit)]
    directory = layout.project_dir(cwd)
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
    layout = agent_layout(agent_dir, kind)
    if layout.kind in (CODEX, GEMINI_CLI):
        selected = _newest_first(_foreign_session_files(layout))[: max(1, limit)]
        if cwd is not None:
            current = project_session_files(agent_dir, cwd, 1, layout.kind)
            if current and all(item.path != current[0].path for item in selected):
                selected = _newest_first([*selected[: max(1, limit) - 1], current[0]])
        return selected
    root = layout.sessions_root
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
