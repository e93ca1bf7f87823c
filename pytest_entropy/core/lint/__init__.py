"""Schema lint (pure): hygiene, size and provider-profile rules over a tool surface, and the
fix that makes a surface satisfy a profile.

Profiles are data; the layer above the core reads their files
(:mod:`pytest_entropy.sources.lint_profiles`) and passes them in parsed.
"""

from __future__ import annotations

from pytest_entropy.core.lint.engine import check_rule_patterns, has_errors, lint_surface, rule_ids
from pytest_entropy.core.lint.model import (
    ERROR,
    RULES,
    WARNING,
    Finding,
    LintOptions,
    Profile,
    ProfileRule,
    RuleInfo,
    profile_from_value,
)

__all__ = [
    "ERROR",
    "RULES",
    "WARNING",
    "Finding",
    "LintOptions",
    "Profile",
    "ProfileRule",
    "RuleInfo",
    "check_rule_patterns",
    "has_errors",
    "lint_surface",
    "profile_from_value",
    "rule_ids",
]
