"""A syrupy extension that snapshots an entropy report as its hash plus canonical JSON.

Use it through the ``entropy_snapshot`` fixture (syrupy is imported only then). syrupy comes
with the ``syrupy`` (or ``testing``) extra, not with the plugin: ``pip install
"pytest-entropy[syrupy]"``; without it, importing this module (or using the fixture) raises a
:class:`~pytest_entropy.core.extras.MissingExtraError` that says so::

    def test_report_is_stable(entropy_meter, entropy_snapshot):
        assert entropy_meter() == entropy_snapshot

The snapshot file (``__snapshots__/<test file>/<test name>.entropy.json``) holds
``{"reportHash": ..., "canonical": <the report in canonical key order>}``: a review shows
which term moved, and the hash pins the exact bytes the reference implementation hashes.
"""

from __future__ import annotations

from typing import Any

from pytest_entropy.core.extras import missing_extra
from pytest_entropy.testing.assertions import snapshot_text

try:
    from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
except ModuleNotFoundError as error:
    raise missing_extra(error, "syrupy", "syrupy", __name__) from None

__all__ = ["EntropyReportExtension"]


class EntropyReportExtension(SingleFileSnapshotExtension):
    """One text file per snapshot: an entropy report's hash and canonical JSON."""

    _write_mode = WriteMode.TEXT
    file_extension = "entropy.json"

    def serialize(self, data: Any, **_options: Any) -> str:
        """The snapshot text of a report (or any JSON-able result with ``to_json``)."""
        return snapshot_text(data)
