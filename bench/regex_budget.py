"""Catastrophic schema patterns: RE2 (what replay uses) against Python's backtracking ``re``.

    python bench/regex_budget.py

Times ``^(a+)+$`` against ``"a" * n + "b"``: Python's ``re`` doubles its time with every
extra character (run here only up to n = 26, about a minute); the replay's RE2 path stays
linear up to n = 10^6. Prints Markdown for ``docs/reliability.md``.
"""

from __future__ import annotations

import re
import time

from pytest_entropy.core.validation import accepts

PATTERN = "^(a+)+$"


def timed(action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    schema = {"type": "string", "pattern": PATTERN}
    print(f'**`{PATTERN}` against `"a" * n + "b"`**\n')
    print("| n | Python `re.search` | replay (`accepts`, RE2) |")
    print("| ---: | ---: | ---: |")
    for n in (16, 20, 22, 24, 26):
        text = "a" * n + "b"
        python = timed(lambda text=text: re.search(PATTERN, text))
        ours = timed(lambda text=text: accepts(schema, text))
        print(f"| {n:,} | {python:.3f} s | {ours * 1e3:.3f} ms |")
    for n in (10_000, 1_000_000):
        text = "a" * n + "b"
        ours = timed(lambda text=text: accepts(schema, text))
        print(f"| {n:,} | (not run: centuries) | {ours * 1e3:.3f} ms |")


if __name__ == "__main__":
    main()
