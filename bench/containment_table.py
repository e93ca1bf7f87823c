"""Print the containment-corpus table of docs/ratchet.md (all real tools, no cap).

python bench/containment_table.py [CORPORA_DIR]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.containment_support import evaluate


def main() -> None:
    default = Path(__file__).resolve().parents[2] / "shared" / "corpora"
    corpora = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    started = time.perf_counter()
    loosening, other = evaluate(corpora)
    print(
        "| loosening edit | edits | classified loosened (path and rule) | "
        "reverse classified tightened | v2 freedom total rose |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    reverse = {row.kind.removeprefix("reverse: "): row for row in other}
    for row in loosening:
        back = reverse[row.kind]
        print(
            f"| {row.kind} | {row.edits} | {row.correct} | {back.correct} | {row.freedom_caught} |"
        )
    edits = sum(row.edits for row in loosening)
    caught = sum(row.freedom_caught for row in loosening)
    right = sum(row.correct for row in loosening)
    print(
        f"| **all** | {edits} | {right} | {sum(reverse[r.kind].correct for r in loosening)} "
        f"| {caught} ({caught / edits:.0%}) |"
    )
    print()
    print("| neutral edit | edits | classified neither loosened nor tightened |")
    print("| --- | ---: | ---: |")
    for row in other:
        if not row.kind.startswith("reverse: "):
            print(f"| {row.kind} | {row.edits} | {row.correct} |")
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
