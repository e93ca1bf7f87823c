"""Memos of input data live for one command (issue 18: no cache outlives one ``main()``)."""

from __future__ import annotations

import contextlib
import importlib
import io
from pathlib import Path
from typing import Any

from pytest_entropy.cli import main
from pytest_entropy.run.memos import INPUT_MEMOS, command_memos, forget_input_memos

DEMO = Path(__file__).resolve().parents[2] / "corpora" / "demo"


def _sizes() -> dict[str, int]:
    sizes = {}
    for module_name, names in INPUT_MEMOS:
        module = importlib.import_module(module_name)
        for name in names:
            memo: Any = getattr(module, name)
            size = memo.cache_info().currsize if hasattr(memo, "cache_info") else len(memo)
            sizes[f"{module_name}.{name}"] = size
    return sizes


def test_every_named_memo_exists_and_is_emptied() -> None:
    from pytest_entropy.core.canonical import canonical_json
    from pytest_entropy.core.fingerprint import signature_distance

    canonical_json({"\u00e9t\u00e9": 1, "ete": {"\u00c5": 2, "b": 3}})  # ICU orders these
    signature_distance("a:string,b:number", "a:string")
    filled = _sizes()
    assert filled["pytest_entropy.core.fingerprint._distance"] > 0
    assert filled["pytest_entropy.core.canonical.collation_sort_key"] > 0
    forget_input_memos()
    assert set(_sizes().values()) == {0}


def test_a_command_starts_and_ends_with_empty_memos() -> None:
    from pytest_entropy.core.canonical import canonical_json

    canonical_json({"z": 1, "y": 2})  # left over from before the command
    seen: dict[str, int] = {}
    with command_memos():
        seen.update(_sizes())
        canonical_json({"x": 1, "w": 2})
    assert set(seen.values()) == {0}
    assert set(_sizes().values()) == {0}


def test_main_leaves_no_memo_behind() -> None:
    argv = [
        "measure",
        "--sessions",
        str(DEMO / "sessions"),
        "--surface",
        str(DEMO / "surface.json"),
    ]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    assert status in (0, 1), err.getvalue()
    assert "score" in out.getvalue().lower()
    assert set(_sizes().values()) == {0}
