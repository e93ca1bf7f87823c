"""A syrupy extension that snapshots an entropy report as its hash plus canonical JSON.

Use it through the ``entropy_snapshot`` fixture (syrupy is imported only then)::

    def test_report_is_stable(entropy_meter, entropy_snapshot):
        assert entropy_meter() == entropy_snapshot

The snapshot file (``__snapshots__/<test file>/<test name>.entropy.json``) holds
``{"reportHash": ..., "canonical": <the report in canonical key order>}``: a review shows
which term moved, and the hash pins the exact bytes the reference implementation hashes.
"""

from __future__ import annotations

from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from pytest_entropy.testing.assertions import snapshot_text

__all__ = ["EntropyReportExtension"]


class EntropyReportExtension(SingleFileSnapshotExtension):
    """One text file per snapshot: an entropy report's hash and canonical JSON."""

    _write_mode = WriteMode.TEXT
    file_extension = "entropy.json"

    def serialize(self, data: Any, **_options: Any) -> str:
        """The snapshot text of a report (or any JSON-able result with ``to_json``)."""
        return snapshot_text(data)
