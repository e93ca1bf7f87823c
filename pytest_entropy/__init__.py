"""pytest-entropy: measure and reduce the tool entropy of LLM tool surfaces.

The public API re-exported here imports no pytest and does no I/O at import time::

    from pytest_entropy import measure, report_hash
    report = measure(traces, surface)
    print(report.score, report_hash(report))
"""

from __future__ import annotations

from ._version import __version__
from .core.canonical import canonical_json, schema_digest, stable_json_hash
from .core.corpus import SessionCorpus, measure_session_corpus, ratchet_verdict, surface_hash
from .core.errors import EntropyError, EntropyInputError
from .core.fingerprint import (
    shannon_entropy_bits,
    shape_signature,
    signature_distance,
    static_freedom,
    surface_freedom_report,
    trend_from_scores,
)
from .core.inputs import entropy_repair_rows, live_surface_snapshot, surface_from_value
from .core.jscompat import round_metric
from .core.meter import MeterState, measure, report_hash
from .core.records import (
    ENTROPY_METRIC_VERSION,
    AuditCall,
    Operation,
    RepairRow,
    Report,
    Trace,
    ValueObservation,
)

__all__ = [
    "ENTROPY_METRIC_VERSION",
    "AuditCall",
    "EntropyError",
    "EntropyInputError",
    "MeterState",
    "Operation",
    "RepairRow",
    "Report",
    "SessionCorpus",
    "Trace",
    "ValueObservation",
    "__version__",
    "canonical_json",
    "entropy_repair_rows",
    "live_surface_snapshot",
    "measure",
    "measure_session_corpus",
    "ratchet_verdict",
    "report_hash",
    "round_metric",
    "schema_digest",
    "shannon_entropy_bits",
    "shape_signature",
    "signature_distance",
    "stable_json_hash",
    "static_freedom",
    "surface_freedom_report",
    "surface_from_value",
    "surface_hash",
    "trend_from_scores",
]
