"""bench/cli_help.py records the grammar a refactor must keep: it covers every command and
every option, and two records of one build are equal (so a difference means a change)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from tests.parser_support import command_parsers

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "cli_help.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_help", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_manifest_names_every_command_and_option(tmp_path: Path) -> None:
    script = _script()
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert script.main(["--out", str(first)]) == 0
    assert script.main(["--out", str(second)]) == 0
    assert script.main(["--compare", str(first), str(second)]) == 0
    manifest = json.loads(first.read_text(encoding="utf-8"))
    assert set(manifest) == {"", *command_parsers()}
    for name, entry in manifest.items():
        for row in entry["actions"]:
            for option in row["options"]:
                assert option in entry["help"], (name, option)


def test_compare_reports_a_changed_help(tmp_path: Path) -> None:
    script = _script()
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    assert script.main(["--out", str(before)]) == 0
    manifest = json.loads(before.read_text(encoding="utf-8"))
    manifest["measure"]["actions"][-1]["help"] = "changed"
    after.write_text(json.dumps(manifest), encoding="utf-8")
    assert script.main(["--compare", str(before), str(after)]) == 1
