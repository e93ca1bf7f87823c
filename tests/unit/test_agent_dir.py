"""The directory layouts live in one module (sources/agent_dir.py), and nothing else spells them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pytest_entropy
from pytest_entropy.sources.agent_dir import (
    agent_dir_from_env,
    agent_repairs_path,
    agent_sessions_dir,
    agent_state_dir,
    agent_surface_path,
    default_state_dir,
    project_sessions_dir,
)

PACKAGE = Path(pytest_entropy.__file__).parent
LAYOUT_MODULE = PACKAGE / "sources" / "agent_dir.py"
# Path expressions that spell a layout: ``/ "sessions"``, ``"fabric" / ...``, ``/ ".entropy"``.
_SPELLED = re.compile(
    r'/\s*"(?:sessions|fabric|surface\.json|current\.json|\.entropy)"|"fabric"\s*/'
)


def test_the_pi_layout(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    assert agent_sessions_dir(agent) == agent / "sessions"
    assert project_sessions_dir(agent, "/home/me/app") == agent / "sessions" / "--home-me-app--"
    assert agent_state_dir(agent) == agent / "fabric" / "entropy"
    assert agent_surface_path(agent) == agent / "fabric" / "entropy" / "surface.json"
    assert agent_repairs_path(agent) == agent / "fabric" / "repairs" / "current.json"
    assert default_state_dir(tmp_path) == tmp_path / ".entropy"


def test_the_agent_dir_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    assert agent_dir_from_env() == tmp_path
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert agent_dir_from_env() == tmp_path / "home" / ".pi" / "agent"


def test_no_other_module_spells_a_layout() -> None:
    spelled = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != LAYOUT_MODULE
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _SPELLED.search(line)
    ]
    assert spelled == []
    assert _SPELLED.search(LAYOUT_MODULE.read_text(encoding="utf-8"))
