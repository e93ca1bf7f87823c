"""The pure core imports no pytest, syrupy, hypothesis or yaml, and does no I/O."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest_entropy.core

CORE = Path(pytest_entropy.core.__file__).parent
FORBIDDEN_MODULES = ("pytest", "_pytest", "syrupy", "hypothesis", "yaml")
FORBIDDEN_IMPORTS = {"os", "pathlib", "shutil", "socket", "subprocess", "tempfile", "io"}


def test_importing_the_core_loads_no_test_framework() -> None:
    code = (
        "import sys, pkgutil, importlib, pytest_entropy.core as core\n"
        "for info in pkgutil.iter_modules(core.__path__):\n"
        "    importlib.import_module('pytest_entropy.core.' + info.name)\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {FORBIDDEN_MODULES!r}]\n"
        "print(','.join(sorted(bad)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_core_sources_do_no_io() -> None:
    for path in sorted(CORE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = {node.module.split(".")[0]}
            else:
                names = set()
            assert not names & FORBIDDEN_IMPORTS, f"{path.name} imports {names}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id != "open", f"{path.name} calls open()"


def test_the_cli_starts_without_loading_jsonschema() -> None:
    # jsonschema (and whatever format libraries a user has installed beside it) loads only
    # when a schema is actually validated; `measure`, `status` and `--version` never pay.
    code = (
        "import sys, pytest_entropy.cli as cli\n"
        "cli.build_parser()\n"
        "print('jsonschema' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
