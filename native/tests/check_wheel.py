"""Compare an installed ``pytest_entropy._core`` with the vectors of ``tests/data``.

For a fresh venv of any interpreter with only the wheel installed (``pip install --no-deps``:
nothing else of the package is imported)::

    VENV/bin/python -W error native/tests/check_wheel.py native/tests/data

Exit status 1 when any case differs from what the plain Python specification recorded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from describe import describe

from pytest_entropy import _core  # type: ignore[attr-defined]


def main(data: Path) -> int:
    cases = json.loads((data / "json.json").read_text())["cases"]
    differ = 0
    for case in cases:
        raw = bytes.fromhex(case["input"])
        try:
            value, fast = _core.parse_json(raw)
        except _core.JSONParseError:
            differ += case["ok"]
            continue
        if not case["ok"] or fast != case["fast"] or describe(value) != case["value"]:
            differ += 1
    lines = json.loads((data / "lines.json").read_text())["cases"]
    for case in lines:
        got, terminated = _core.split_lines(bytes.fromhex(case["input"]), case["cap"])
        found = [None if line is None else line.hex() for line in got]
        if found != case["lines"] or terminated != case["terminated"]:
            differ += 1
    gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    print(
        f"Python {sys.version.split()[0]}: {len(cases)} JSON and {len(lines)} line vectors,"
        f" {differ} differ; GIL {'enabled' if gil else 'disabled'}"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
