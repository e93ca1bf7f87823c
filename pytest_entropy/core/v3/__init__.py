"""Metric v3: what the upstream's current generation does differently from v2.

Everything both generations share (the accumulation pass, the primitives, the stable hash,
TypeBox's decisions) stays in :mod:`pytest_entropy.core`; the modules here hold only what v3
changes, so a reader sees the difference at a glance (issue 30, spec notes §0.2):

* :mod:`.normal_form` — statically derived, capability-preserving normal-form plans;
* :mod:`.meter` — finalisation: the invocation-rejection rate as the objective;
* :mod:`.proposals` — ``normal-form`` proposals beside the advisory review signals.
"""

from __future__ import annotations

# The generation's number and the only kind of proposal a v3 compile applies (re-exported
# by :mod:`.proposals`) are defined where the v2 modules that need them can read them
# without importing this package.
from pytest_entropy.core.records import ENTROPY_METRIC_VERSION_V3
from pytest_entropy.core.review_signals import V3_AUTO_APPLY_PROPOSAL_KINDS

__all__ = ["ENTROPY_METRIC_VERSION_V3", "V3_AUTO_APPLY_PROPOSAL_KINDS"]
