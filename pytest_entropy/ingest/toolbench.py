"""ToolBench answer files: a DFSDT search tree per query (``tree.tree``).

The tree alternates ``Thought``, ``Action`` (``description`` = the function name) and
``Action Input`` nodes (``description`` = the JSON arguments, ``observation_code`` = the
status ToolBench's RapidAPI server returned). Every ``Action Input`` child of an ``Action``
node is one call, in depth-first order, abandoned branches included.

* outcome from ``observation_code``, a typed status: 0 (ok), 3 (final answer) and 4 (gave
  up, a ``Finish`` call that worked) succeeded; 1 (no such function) failed at ``resolve``;
  2 (bad ``Finish`` arguments) at ``validate``; 5 timed out; 6-12 (HTTP and API errors)
  failed at ``invoke``; no code: ``aborted``;
* trace: one answer file; task key: the query id (the file name before its first ``_``);
* model: the method's model in the file name (``<qid>_ChatGPT_DFS_...``) as
  ``toolbench/<model>``; none if the name has no such part;
* files: a directory means every ``*.json`` below it; files that are not answer trees count
  as unrecognized.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytest_entropy.ingest.base import SessionFormat
from pytest_entropy.ingest.detection import is_json_name, sorted_files
from pytest_entropy.ingest.detectors import detect_toolbench
from pytest_entropy.ingest.diagnostics import ScanDiagnostics
from pytest_entropy.ingest.foreign import decode_arguments, load_json_document
from pytest_entropy.ingest.writer import ForeignCall, ForeignTrace, NativeWriter

if TYPE_CHECKING:
    from pytest_entropy.ingest.base import ReadOptions

__all__ = ["FORMAT", "OBSERVATION_OUTCOMES", "detect_toolbench", "json_tree", "read_toolbench"]

# ToolBench's rapidapi.py status codes -> (outcome, typed stage).
OBSERVATION_OUTCOMES: Final[dict[int, tuple[str, str | None]]] = {
    0: ("succeeded", None),
    1: ("failed", "resolve"),
    2: ("failed", "validate"),
    3: ("succeeded", None),
    4: ("succeeded", None),
    5: ("timed_out", None),
    **dict.fromkeys(range(6, 13), ("failed", "invoke")),
}


def _names(path: Path) -> tuple[str, str | None]:
    stem = path.name.removesuffix(".gz").removesuffix(".json")
    parts = stem.split("_")
    task = parts[0] or stem
    model = parts[1] if len(parts) > 2 and parts[1] else None
    return task, (f"toolbench/{model}" if model else None)


def _walk(node: Any, trace: ForeignTrace, diagnostics: ScanDiagnostics) -> None:
    # An explicit stack: search trees can be deeper than Python's recursion allows.
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is not dict:
            continue
        children = current.get("children")
        children = children if type(children) is list else []
        if current.get("node_type") == "Action" and type(current.get("description")) is str:
            for child in children:
                if type(child) is dict and child.get("node_type") == "Action Input":
                    trace.calls.append(_call(current["description"], child, diagnostics))
        stack.extend(reversed(children))


def _call(name: str, node: dict[str, Any], diagnostics: ScanDiagnostics) -> ForeignCall:
    args, decoded = decode_arguments(node.get("description"))
    if not decoded:
        diagnostics.undecodable_arguments += 1
    code = node.get("observation_code")
    outcome, stage = (
        OBSERVATION_OUTCOMES.get(code, ("failed", None)) if type(code) is int else ("aborted", None)
    )
    return ForeignCall(name, args, outcome, stage)


def read_toolbench(
    path: Path, options: ReadOptions, diagnostics: ScanDiagnostics
) -> Iterator[bytes]:
    """Native lines of one ToolBench answer file."""
    where = str(path)
    ok, document = load_json_document(path, diagnostics, name=where)
    if not ok:
        return
    tree = document.get("tree") if type(document) is dict else None
    root = tree.get("tree") if type(tree) is dict else None
    if type(root) is not dict:
        diagnostics.unrecognized(where, "not a ToolBench answer tree")
        return
    diagnostics.foreign_records += 1
    task, model = _names(path)
    trace = ForeignTrace(task, model)
    _walk(root, trace, diagnostics)
    yield from NativeWriter(options, diagnostics).lines(trace)


def json_tree(root: Path) -> list[Path]:
    """Every ``*.json`` (and gzipped) file under ``root``, by relative path."""
    return sorted_files(root, is_json_name, recursive=True)


FORMAT: Final = SessionFormat(
    "toolbench", read_toolbench, detector=detect_toolbench, directory_files=json_tree
)
