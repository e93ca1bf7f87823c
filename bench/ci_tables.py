"""Write the silent-zero and corpus-directory tables of docs/ci.md (issue 14).

    python bench/ci_tables.py [--corpora ../shared/corpora] [--check]

Both tables are computed by running the commands (``tests/ci_tables_support.py``, which
``tests/corpora/test_ci_tables.py`` checks the page against). ``--check`` writes nothing and
exits 1 when the page differs from what the commands give today.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.ci_tables_support import (  # noqa: E402
    CORPORA,
    CORPORA_HEADER,
    SILENT_ZERO,
    SILENT_ZERO_HEADER,
    corpus_rows,
    markdown_table,
    replace_block,
    silent_zero_rows,
)

PAGE = REPO / "docs" / "ci.md"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--check", action="store_true", help="only compare, exit 1 on a change")
    args = parser.parse_args()
    page = PAGE.read_text(encoding="utf-8")
    updated = replace_block(
        SILENT_ZERO, page, markdown_table(SILENT_ZERO_HEADER, silent_zero_rows())
    )
    rows = [row.cells() for row in corpus_rows(args.corpora)]
    updated = replace_block(CORPORA, updated, markdown_table(CORPORA_HEADER, rows))
    if args.check:
        if updated != page:
            print("docs/ci.md differs from what the commands give; run bench/ci_tables.py")
            return 1
        print("docs/ci.md is up to date")
        return 0
    PAGE.write_text(updated, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
