"""Deterministic generator of native session JSONL corpora (benchmarks and the demo corpus).

Lines look like a real agent host's log: user and assistant messages, model changes, and
``fabric_exec`` tool results whose ``details`` carry a V1 trace and verbatim audits, with
tool output text in ``content``. A seeded PRNG drives every choice, so the same arguments
always write the same bytes.

    python bench/corpus_gen.py --out /tmp/corpus --files 100 --megabytes 64
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MODELS = [
    ("anthropic", "claude-sonnet-4-5"),
    ("openai", "gpt-5"),
    ("zro", "kimi-k3"),
    ("coralbricks", "glm-5.3-fp4"),
]

# ref -> argument generators; MCP refs keep no projected trace args ({}), as in the spec.
FORMATS = ["pdf", "pdf", "pdf", "html", "pdf", "html", "docx"]
LEVELS = ["info", "info", "info", "warn", "error", "debug"]


def _pi_read(rng: random.Random) -> dict[str, Any]:
    args: dict[str, Any] = {"path": f"src/module_{rng.randrange(400)}.py"}
    if rng.random() < 0.4:
        args["limit"] = rng.choice([20, 40, 80, 200])
    if rng.random() < 0.2:
        args["offset"] = rng.randrange(1, 500)
    return args


def _pi_edit(rng: random.Random) -> dict[str, Any]:
    return {"path": f"src/module_{rng.randrange(400)}.py"}


def _pi_bash(rng: random.Random) -> dict[str, Any]:
    args: dict[str, Any] = {
        "command": rng.choice(["pytest -q", "ruff check .", "git status", "make build", "ls -la"])
    }
    if rng.random() < 0.15:
        args["timeout"] = rng.choice([60, 120, 600])
    return args


def _pi_grep(rng: random.Random) -> dict[str, Any]:
    return {"path": rng.choice(["src", "tests", "."]), "limit": rng.choice([20, 50])}


def _render(rng: random.Random) -> dict[str, Any]:
    return {"format": rng.choice(FORMATS), "title": f"Report {rng.randrange(1000)}"}


def _flags(rng: random.Random) -> dict[str, Any]:
    return {"level": rng.choice(LEVELS)}


def _search(rng: random.Random) -> dict[str, Any]:
    args: dict[str, Any] = {"query": f"term{rng.randrange(5000)}"}
    if rng.random() < 0.5:
        args["limit"] = rng.choice([5, 10, 25])
    if rng.random() < 0.1:
        args["filters"] = {"kind": rng.choice(["note", "task"]), "tags": ["a", "b"]}
    return args


def _recall(rng: random.Random) -> dict[str, Any]:
    return {"query": f"q{rng.randrange(300)}", "role": rng.choice(["user", "assistant"])}


ACTIONS = {
    "pi.read": (_pi_read, True),
    "pi.edit": (_pi_edit, True),
    "pi.bash": (_pi_bash, True),
    "pi.grep": (_pi_grep, True),
    "mcp.report.render": (_render, False),
    "mcp.flags.set": (_flags, False),
    "mcp.notes.search": (_search, False),
    "memory.recall": (_recall, False),
}
ACTION_REFS = list(ACTIONS)
ACTION_WEIGHTS = [20, 10, 18, 8, 6, 4, 10, 6]
STAGES = ["validate", "invoke", "invoke", "prepare", "resolve", "guard"]


def _output_text(rng: random.Random, size: int) -> str:
    words = ["def", "return", "import", "class", "self", "value", "error", "test", "None", "pass"]
    out = []
    length = 0
    while length < size:
        line = " ".join(rng.choice(words) for _ in range(rng.randrange(3, 12)))
        out.append(line)
        length += len(line) + 1
    return "\n".join(out)


def _operation(rng: random.Random, sequence: int) -> tuple[dict[str, Any], dict[str, Any]]:
    roll = rng.random()
    if roll < 0.05:
        ref = "fabric.discovery." + rng.choice(["search", "describe", "catalog"])
        op = {
            "type": "call",
            "sequence": sequence,
            "ref": ref,
            "args": {"limit": 5},
            "outcome": "succeeded",
        }
        return op, {"ref": ref, "args": {"limit": 5}}
    if roll < 0.07:
        ref = "fabric.workflow.phase"
        args = {"name": "verify", "id": f"p{sequence}", "total": 1}
        op = {
            "type": "call",
            "sequence": sequence,
            "ref": ref,
            "args": args,
            "outcome": "succeeded",
        }
        return op, {"ref": ref, "args": args}
    ref = rng.choices(ACTION_REFS, ACTION_WEIGHTS)[0]
    make, projected = ACTIONS[ref]
    args = make(rng)
    provider, _, action = ref.partition(".")
    op: dict[str, Any] = {
        "type": "call",
        "sequence": sequence,
        "ref": ref,
        "provider": provider,
        "action": action,
        "args": {k: args[k] for k in sorted(args)} if projected else {},
        "outcome": "succeeded",
    }
    fail = rng.random()
    if fail < 0.12:
        op["outcome"] = "failed"
        op["failureStage"] = rng.choice(STAGES)
        op["error"] = f"Call failed during {op['failureStage']}"
    elif fail < 0.13:
        op["outcome"] = rng.choice(["aborted", "timed_out"])
    audit = {
        "ref": ref,
        "tool": action,
        "provider": provider,
        "success": op["outcome"] == "succeeded",
        "args": args,
    }
    return op, audit


def session_lines(rng: random.Random, target_bytes: int, index: int) -> Iterator[str]:
    """Lines of one session file, about ``target_bytes`` long."""
    size = 0
    entry = 0
    provider, model = MODELS[index % len(MODELS)]

    def emit(record: dict[str, Any]) -> str:
        nonlocal size
        text = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        size += len(text.encode()) + 1
        return text

    yield emit({"type": "session", "id": f"session-{index}", "cwd": f"/work/project{index % 7}"})
    while size < target_bytes:
        entry += 1
        if rng.random() < 0.03:
            provider, model = rng.choice(MODELS)
            yield emit(
                {"id": f"m{entry}", "type": "model_change", "provider": provider, "modelId": model}
            )
        yield emit(
            {
                "id": f"u{entry}",
                "type": "message",
                "message": {"role": "user", "content": _output_text(rng, 120)},
            }
        )
        yield emit(
            {
                "id": f"a{entry}",
                "type": "message",
                "message": {
                    "role": "assistant",
                    "provider": provider,
                    "model": model,
                    "content": [{"type": "text", "text": _output_text(rng, 200)}],
                },
            }
        )
        ops = []
        audits = []
        for sequence in range(rng.randrange(1, 9)):
            op, audit = _operation(rng, sequence)
            ops.append(op)
            audits.append(audit)
        outcome = "failed" if any(op["outcome"] == "failed" for op in ops) else "succeeded"
        phases = [rng.choice(["triage", "build", "fix", "verify", "review"])]
        trace: dict[str, Any] = {
            "kind": "pi-fabric.execution",
            "version": 1,
            "outcome": outcome,
            "phases": phases,
            "operations": ops,
            "counts": {
                "droppedValues": 0,
                "truncatedValues": 0,
                "redactedValues": 0,
                "droppedOperations": 0,
            },
        }
        yield emit(
            {
                "id": f"e{entry}",
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": f"call-e{entry}",
                    "toolName": "fabric_exec",
                    "content": [
                        {"type": "text", "text": _output_text(rng, rng.randrange(200, 900))}
                    ],
                    "details": {
                        "success": outcome == "succeeded",
                        "trace": trace,
                        "audits": audits,
                        "phases": phases,
                    },
                },
            }
        )


def write_corpus(out: Path, files: int, megabytes: float, seed: int) -> tuple[int, int]:
    """Write ``files`` session files totalling about ``megabytes``; returns (bytes, lines)."""
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    per_file = int(megabytes * 1_000_000 / max(1, files))
    total = lines = 0
    for index in range(files):
        path = out / f"session-{index:04d}.jsonl"
        with open(path, "w", encoding="utf-8", newline="\n") as stream:
            for line in session_lines(rng, per_file, index):
                stream.write(line + "\n")
                lines += 1
        total += path.stat().st_size
    return total, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--megabytes", type=float, default=64)
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args()
    total, lines = write_corpus(args.out, args.files, args.megabytes, args.seed)
    print(f"wrote {args.files} files, {lines} lines, {total / 1e6:.1f} MB to {args.out}")


if __name__ == "__main__":
    main()
