"""docs/ci.md's tables are what the commands give today: the silent-zero inputs fail with
their messages, and every real corpus directory measures its operations with ``--format auto``
(issue 14). ``bench/ci_tables.py`` rewrites the tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ci_tables_support import (
    CORPORA,
    CORPORA_HEADER,
    SILENT_ZERO,
    SILENT_ZERO_HEADER,
    corpus_rows,
    generated_block,
    markdown_table,
    silent_zero_rows,
)

PAGE = Path(__file__).resolve().parents[2] / "docs" / "ci.md"
# The directories a session reader reads; the others hold only surfaces, questions or
# dialogues no reader claims.
SESSION_CORPORA = {
    "bfcl-results-2024-08",
    "bfcl-v4-results-gpt-oss",
    "claude-code-sessions-spotter",
    "openhands-trajectories",
    "pi-sessions",
    "tau-bench-historical",
    "toolbench-data-example",
}


def test_the_silent_zero_table() -> None:
    rows = silent_zero_rows()
    for row in rows:
        codes = row[2:-1]
        assert codes == ["2 (0)"] * len(codes), row  # exit 2; with --allow-empty 0
        assert "0 traces" in row[-1] and "--allow-empty" in row[-1]
    page = PAGE.read_text(encoding="utf-8")
    assert generated_block(SILENT_ZERO, page) == markdown_table(SILENT_ZERO_HEADER, rows)


@pytest.mark.corpora
@pytest.mark.slow
def test_every_corpus_directory(shared_corpora: Path) -> None:
    rows = corpus_rows(shared_corpora)
    by_name = {row.directory: row for row in rows}
    assert set(by_name) >= SESSION_CORPORA
    for row in rows:
        if row.directory in SESSION_CORPORA:
            assert row.operations > 0 and row.code == 0, row
        else:
            assert row.operations == 0 and row.code == 2 and "0 traces" in row.message, row
    # The directories, with the counts their READMEs give.
    assert by_name["tau-bench-historical"].operations == 1164
    assert by_name["toolbench-data-example"].operations == 328
    assert by_name["openhands-trajectories"].operations == 116
    assert by_name["bfcl-v4-results-gpt-oss"].operations == 14223
    page = PAGE.read_text(encoding="utf-8")
    table = markdown_table(CORPORA_HEADER, [row.cells() for row in rows])
    assert generated_block(CORPORA, page) == table
