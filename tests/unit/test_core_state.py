"""The core keeps no record between calls: what a replay could not enforce comes back to the
block that asked (``watch_unenforced``), never through module state."""

from __future__ import annotations

import copy
import importlib
import pkgutil
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

import pytest_entropy.core
from pytest_entropy.cli import main
from pytest_entropy.core.regex import Unenforced, watch_unenforced
from pytest_entropy.core.validation import accepts
from pytest_entropy.run.memos import INPUT_MEMOS

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"
LOOKAHEAD = {"type": "string", "pattern": "^(?=x)x$"}
EXTERNAL = {"type": "object", "properties": {"n": {"$ref": "https://example.invalid/n.json"}}}
# Module-level containers the core may keep: memos of pure functions, each bounded, none of
# which changes a result (docs/decisions.md, "The core keeps no record between calls"); they
# are the ones run/memos.py empties around every command, so that list is the one kept here.
MEMOS = {
    module: set(names) for module, names in INPUT_MEMOS if module.startswith("pytest_entropy.core.")
}


def _core_modules() -> list[Any]:
    modules = []
    for info in pkgutil.walk_packages(pytest_entropy.core.__path__, "pytest_entropy.core."):
        modules.append(importlib.import_module(info.name))
    return modules


def _containers() -> dict[str, Any]:
    found = {}
    for module in _core_modules():
        allowed = MEMOS.get(module.__name__, set())
        for name, value in vars(module).items():
            if name.startswith("__") or name in allowed:
                continue
            if type(value) in (list, dict, set, OrderedDict, bytearray):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_a_run_of_every_corpus_command_leaves_the_core_modules_as_they_were(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Module-level containers of the core are constant tables; a command that changed one
    # would carry a record from one call to the next.
    before = {name: copy.deepcopy(value) for name, value in _containers().items()}
    assert before, "the core has no module-level tables at all: the check would be empty"
    demo = ["--sessions", str(DEMO / "sessions"), "--surface", str(DEMO / "surface.json")]
    for command in (
        ["measure", *demo],
        ["propose", *demo],
        ["compile", *demo, "--out", str(tmp_path / "compiled.json")],
        ["trial", *demo, "--artifact", str(tmp_path / "compiled.json")],
        ["lint", "--surface", str(DEMO / "surface.json")],
    ):
        assert main([*command, "--json"]) in (0, 1), capsys.readouterr().err
    with watch_unenforced():
        accepts(LOOKAHEAD, "y")
        accepts(EXTERNAL, {"n": 1})
    after = _containers()
    assert after.keys() == before.keys()
    changed = [name for name, value in after.items() if value != before[name]]
    assert changed == []


def test_what_was_met_comes_back_to_the_block_that_asked() -> None:
    with watch_unenforced() as met:
        assert accepts(LOOKAHEAD, "y")  # not enforced: accepted
        assert accepts(EXTERNAL, {"n": "anything"})
    assert met.patterns == {"^(?=x)x$"}
    assert met.refs == {"https://example.invalid/n.json"}
    with watch_unenforced() as again:  # a second block starts empty: nothing is carried over
        assert accepts({"type": "string"}, "y")
    assert again == Unenforced()


def test_blocks_nest_and_outer_blocks_see_inner_findings() -> None:
    with watch_unenforced() as outer:
        with watch_unenforced() as inner:
            accepts(LOOKAHEAD, "y")
        assert inner.patterns == {"^(?=x)x$"}
        accepts(EXTERNAL, {"n": 1})
    assert outer.patterns == {"^(?=x)x$"}
    assert outer.refs == {"https://example.invalid/n.json"}
    assert inner.refs == set()


def test_threads_keep_their_own_records() -> None:
    results: dict[str, Unenforced] = {}
    barrier = threading.Barrier(2)

    def work(name: str, schema: dict[str, Any], value: Any) -> None:
        with watch_unenforced() as met:
            barrier.wait()
            for _ in range(50):
                accepts(schema, value)
            barrier.wait()
        results[name] = met

    threads = [
        threading.Thread(target=work, args=("patterns", LOOKAHEAD, "y")),
        threading.Thread(target=work, args=("refs", EXTERNAL, {"n": 1})),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results["patterns"] == Unenforced({"^(?=x)x$"}, set())
    assert results["refs"] == Unenforced(set(), {"https://example.invalid/n.json"})


def test_outside_a_block_the_answer_is_unchanged_and_nothing_is_kept() -> None:
    assert accepts(LOOKAHEAD, "y")
    with watch_unenforced() as met:
        pass
    assert met == Unenforced()
