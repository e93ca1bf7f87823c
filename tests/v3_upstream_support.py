"""Our metric v3 outputs in the form ``tests/data/v3_upstream.mjs`` writes the upstream's.

:func:`our_outputs` runs our CLI with ``--metric-version 3`` on a case (a directory with a
``spec.json``: session files, a surface, maybe repairs) and returns the same keys as the
upstream driver: the report hash, the sha256 of each object's compact JSON (``compact``) and
of each written file (``files``), the second compile's status, and the objects themselves.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

from pytest_entropy.cli import main
from pytest_entropy.core.canonical import file_text, js_stringify


def sha_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha_compact(value: Any) -> str:
    """sha256 of ``JSON.stringify(value)``."""
    return sha_text(js_stringify(value))


def run_cli(argv: list[str]) -> tuple[int, Any]:
    """``main(argv)`` in this process: its exit status and its parsed ``--json`` output."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    text = out.getvalue()
    return code, json.loads(text) if text.strip().startswith(("{", "[")) else text


def _command_args(
    sessions: Path, directory: Path, spec: dict[str, Any], repairs: bool
) -> list[str]:
    argv = [
        "--sessions",
        str(sessions),
        "--surface",
        str(directory / spec["surface"]),
        "--metric-version",
        "3",
        "--format",
        "fabric",
        "--no-progress",
        "--allow-empty",
    ]
    if repairs and spec.get("repairs"):
        argv += ["--repairs", str(directory / spec["repairs"])]
    return argv


def our_outputs(directory: Path, work: Path) -> dict[str, Any]:
    """Every v3 output of our CLI for the case in ``directory`` (scratch files in ``work``)."""
    spec = json.loads((directory / "spec.json").read_text(encoding="utf-8"))
    # The session files go into one directory so the CLI reads exactly them, in the spec's
    # order (their names sort in that order).
    sessions = work / "sessions"
    sessions.mkdir()
    names = [Path(file).name for file in spec["sessions"]]
    if names != sorted(names) or len(set(names)) != len(names):
        raise ValueError(f"{directory}: session names must be distinct and sorted")
    for file in spec["sessions"]:
        shutil.copyfile(directory / file, sessions / Path(file).name)
    args = _command_args(sessions, directory, spec, repairs=True)
    plain = _command_args(sessions, directory, spec, repairs=False)
    result: dict[str, Any] = {"exit": {}}

    code, measured = run_cli(["measure", *args, "--json"])
    result["exit"]["measure"] = code
    result["reportHash"], result["report"] = measured["reportHash"], measured["report"]

    code, proposed = run_cli(["propose", *args, "--json"])
    result["exit"]["propose"] = code
    result["proposals"] = proposed["proposals"]

    code, from_traces = run_cli(["propose", *args, "--no-audit-values", "--json"])
    result["exit"]["proposeFromTraces"] = code
    result["proposalsFromTraces"] = from_traces["proposals"]

    compiled_path = work / "compiled.json"
    code, result["compile"] = run_cli(["compile", *args, "--out", str(compiled_path), "--json"])
    result["exit"]["compile"] = code
    compiled_text = compiled_path.read_text(encoding="utf-8") if compiled_path.exists() else None
    result["compiledJson"] = compiled_text
    if compiled_text is not None:
        again = ["compile", *args, "--artifact", str(compiled_path), "--json"]
        code, recompiled = run_cli([*again, "--out", str(work / "recompiled.json")])
        result["recompileStatus"] = recompiled["status"]
    else:
        result["recompileStatus"] = result["compile"]["status"]

    compile_pool = ["compile", *args, "--pool", str(work / "compile-pool.json"), "--json"]
    code, result["compileWithPool"] = run_cli(compile_pool)
    result["exit"]["compileWithPool"] = code

    code, result["trialBare"] = run_cli(["trial", *plain, "--json"])
    result["exit"]["trialBare"] = code
    if compiled_text is not None:
        trial = ["trial", *plain, "--artifact", str(compiled_path), "--json"]
        code, result["trial"] = run_cli(trial)
        result["exit"]["trial"] = code

    pool_path = work / "pool.json"
    code, _ = run_cli(["pool", *plain, "--out", str(pool_path), "--json"])
    result["exit"]["pool"] = code
    pool = json.loads(pool_path.read_text(encoding="utf-8"))
    # Each window is named by its file; the upstream driver names it by the basename.
    for session in pool["tracked"]:
        session["file"] = Path(session["file"]).name
    result["poolFile"] = pool
    result["poolJson"] = file_text(pool)

    merge_text = None
    if compiled_text is not None:
        state = work / "state"
        argv = ["import", str(compiled_path), "--surface", str(directory / spec["surface"])]
        code, _ = run_cli([*argv, "--metric-version", "3", "--state-dir", str(state), "--json"])
        result["exit"]["import"] = code
        merge_text = (state / "compiled.json").read_text(encoding="utf-8")
    result["mergeJson"] = merge_text

    result["compact"] = {
        key: sha_compact(result[key])
        for key in ("report", "proposals", "compile", "compileWithPool", "trial", "trialBare")
        if key in result
    }
    result["compact"]["pool"] = sha_compact(pool)
    result["files"] = {
        "compiled": sha_text(compiled_text) if compiled_text is not None else None,
        "pool": sha_text(result["poolJson"]),
        "merge": sha_text(merge_text) if merge_text is not None else None,
    }
    return result


def assert_matches_upstream(ours: dict[str, Any], upstream: dict[str, Any]) -> None:
    """Every artifact equal: report hash, compact objects, file bytes, second compile."""
    differences = []
    if ours["reportHash"] != upstream["reportHash"]:
        differences.append("reportHash")
    for key, digest in upstream["compact"].items():
        if key == "merge":
            continue  # the import writes only the merged file; compared as a file below
        if key == "trial" and upstream["files"]["compiled"] is None:
            continue  # no artifact, so no trial with one
        if ours["compact"].get(key) != digest:
            differences.append(f"compact.{key}")
    for key, digest in upstream["files"].items():
        if ours["files"][key] != digest:
            differences.append(f"files.{key}")
    exception = upstream.get("poolNamedException")
    if exception is not None and {"compact.pool", "files.pool"} >= set(differences) - {
        "reportHash"
    }:
        # The pool leaves out what its loader would reject (a named exception): then it
        # must equal the upstream's pool of the same windows without those observations.
        if ours["compact"]["pool"] == exception["compact"]:
            differences = [item for item in differences if item != "compact.pool"]
        if ours["files"]["pool"] == exception["file"]:
            differences = [item for item in differences if item != "files.pool"]
    if ours["recompileStatus"] != upstream["recompileStatus"]:
        differences.append("recompileStatus")
    if differences:
        raise AssertionError("differs from the upstream: " + ", ".join(differences))


def our_artifact_outputs(directory: Path, work: Path, name: str) -> dict[str, Any]:
    """Our CLI with the case's artifact ``name`` as the incumbent of a compile, the artifact
    of a trial and the peer of an import (into the corpus's own artifact and into nothing).
    """
    spec = json.loads((directory / "spec.json").read_text(encoding="utf-8"))
    upstream = json.loads((directory / "upstream.json").read_text(encoding="utf-8"))
    sessions = work / "sessions"
    if not sessions.exists():
        sessions.mkdir()
        for file in spec["sessions"]:
            shutil.copyfile(directory / file, sessions / Path(file).name)
    artifact = directory / name
    surface = str(directory / spec["surface"])
    args = _command_args(sessions, directory, spec, repairs=True)
    plain = _command_args(sessions, directory, spec, repairs=False)
    result: dict[str, Any] = {}
    out = work / "out.json"
    out.unlink(missing_ok=True)
    code, compiled = run_cli(
        ["compile", *args, "--artifact", str(artifact), "--out", str(out), "--json"]
    )
    result["compileExit"], result["compile"] = code, compiled
    result["compiledJson"] = out.read_text(encoding="utf-8") if out.exists() else None
    code, result["trial"] = run_cli(["trial", *plain, "--artifact", str(artifact), "--json"])
    result["trialExit"] = code
    exported = work / "exported.json"
    exported.unlink(missing_ok=True)
    argv = ["export-artifact", "--artifact", str(artifact), "--out", str(exported)]
    code, _ = run_cli([*argv, "--metric-version", "3", "--json"])
    result["exportExit"] = code
    result["exported"] = exported.read_text(encoding="utf-8") if exported.exists() else None
    for label, local in (("mergedEmpty", None), ("mergedLocal", upstream["compiledJson"])):
        state = work / f"state-{label}"
        shutil.rmtree(state, ignore_errors=True)
        state.mkdir()
        if local is not None:
            (state / "compiled.json").write_text(local, encoding="utf-8")
        argv = ["import", str(artifact), "--surface", surface, "--metric-version", "3"]
        code, value = run_cli([*argv, "--state-dir", str(state), "--json"])
        path = state / "compiled.json"
        result[label] = {
            "exit": code,
            "json": value if isinstance(value, dict) else None,
            "text": path.read_text(encoding="utf-8") if path.exists() else None,
        }
    return result
