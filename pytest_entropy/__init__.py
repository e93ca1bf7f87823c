"""pytest-entropy: measure and reduce the tool entropy of LLM tool surfaces.

The public API re-exported here imports no pytest and does no I/O at import time::

    from pytest_entropy import measure, report_hash
    report = measure(traces, surface)
    print(report.score, report_hash(report))
"""

from __future__ import annotations

from pytest_entropy._version import __version__

# typing costs a third of the interpreter's start-up, and the CLI and the pytest plugin
# import this package on every start (issue 32): its names here are for mypy only.
TYPE_CHECKING = False


def _select_paths() -> None:
    # PYTEST_ENTROPY_PURE=1 refuses the Rust core: the plain Python, the specification, runs
    # every hot path (the core cannot read the environment itself: it does no I/O). Worker
    # processes inherit it. PYTEST_ENTROPY_NO_NATIVE=1 once refused the C kernels alone; the
    # Rust core is the only native code left, so it now means the same (docs/decisions.md).
    import os

    for variable in ("PYTEST_ENTROPY_PURE", "PYTEST_ENTROPY_NO_NATIVE"):
        if os.environ.get(variable, "").strip() not in ("", "0"):
            from pytest_entropy.core.native_core import use_native_core

            use_native_core(False)


_select_paths()

# Names resolve on first use: the pytest plugin and the CLI import this package on every
# start, and most of them never need the meter (PEP 562 module __getattr__).
_LAZY = {
    "AuditCall": ".core.records",
    "ENTROPY_METRIC_VERSION": ".core.versions",
    "EntropyError": ".core.errors",
    "EntropyInputError": ".core.errors",
    "MeterState": ".core.meter",
    "Operation": ".core.records",
    "RepairRow": ".core.records",
    "Report": ".core.records",
    "SessionCorpus": ".core.status",
    "Trace": ".core.records",
    "ValueObservation": ".core.records",
    "canonical_json": ".core.canonical",
    "diff_surfaces": ".sources.surface",
    "load_surface": ".sources.surface",
    "entropy_repair_rows": ".core.inputs",
    "live_surface_snapshot": ".core.inputs",
    "measure": ".core.meter",
    "measure_session_corpus": ".core.status",
    "ratchet_verdict": ".core.status",
    "report_hash": ".core.meter",
    "round_metric": ".core.jscompat",
    "schema_digest": ".core.canonical",
    "shannon_entropy_bits": ".core.fingerprint",
    "shape_signature": ".core.fingerprint",
    "signature_distance": ".core.fingerprint",
    "stable_json_hash": ".core.canonical",
    "static_freedom": ".core.fingerprint",
    "surface_freedom_report": ".core.fingerprint",
    "surface_from_value": ".core.inputs",
    "surface_hash": ".core.status",
    "trend_from_scores": ".core.fingerprint",
    # The gate, enforcement and the tool-author assertions (none of them imports pytest).
    "CallVerdict": ".core.enforce",
    "validate_call": ".core.enforce",
    "evaluate_gate": ".core.gate",
    "assert_deterministic": ".testing.assertions",
    "assert_no_entropy_increase": ".testing.assertions",
    "assert_ratchet": ".testing.assertions",
    "compare_surfaces": ".testing.assertions",
}

if TYPE_CHECKING:
    from typing import Any

    from pytest_entropy.core.canonical import canonical_json, schema_digest, stable_json_hash
    from pytest_entropy.core.enforce import CallVerdict, validate_call
    from pytest_entropy.core.errors import EntropyError, EntropyInputError
    from pytest_entropy.core.fingerprint import (
        shannon_entropy_bits,
        shape_signature,
        signature_distance,
        static_freedom,
        surface_freedom_report,
        trend_from_scores,
    )
    from pytest_entropy.core.gate import evaluate_gate
    from pytest_entropy.core.inputs import (
        entropy_repair_rows,
        live_surface_snapshot,
        surface_from_value,
    )
    from pytest_entropy.core.jscompat import round_metric
    from pytest_entropy.core.meter import MeterState, measure, report_hash
    from pytest_entropy.core.records import (
        AuditCall,
        Operation,
        RepairRow,
        Report,
        Trace,
        ValueObservation,
    )
    from pytest_entropy.core.status import (
        SessionCorpus,
        measure_session_corpus,
        ratchet_verdict,
        surface_hash,
    )
    from pytest_entropy.core.versions import ENTROPY_METRIC_VERSION
    from pytest_entropy.sources.surface import diff_surfaces, load_surface
    from pytest_entropy.testing.assertions import (
        assert_deterministic,
        assert_no_entropy_increase,
        assert_ratchet,
        compare_surfaces,
    )


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "ENTROPY_METRIC_VERSION",
    "AuditCall",
    "CallVerdict",
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
    "assert_deterministic",
    "assert_no_entropy_increase",
    "assert_ratchet",
    "canonical_json",
    "compare_surfaces",
    "diff_surfaces",
    "entropy_repair_rows",
    "evaluate_gate",
    "live_surface_snapshot",
    "load_surface",
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
    "validate_call",
]
