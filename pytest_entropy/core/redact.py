"""Redaction of observed argument values (``--redact-values``), pure.

The observation pool (spec §6) stores argument values verbatim: for coding agents that is
file bodies, shell commands and, now and then, a credential pasted into a call. With
``--redact-values`` a value that is long, shaped like a secret, or given under a key that
names one is replaced by a digest of itself before it is counted. Equal values still get
equal digests, so every count, every threshold and every window digest is computed as
before over the replaced values; only the text is gone. ``trial --explain`` uses the same
function for the refused values it shows.

Off by default: the pool then stays byte-compatible with the reference.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Final

from pytest_entropy.core.canonical import sha256
from pytest_entropy.core.records import ValueObservation

__all__ = [
    "REDACT_BOUND",
    "is_redacted",
    "is_secret_key",
    "looks_secret",
    "redact_observation",
    "redact_observed_value",
]

# The longest string kept verbatim (characters). Enum vocabularies, ids and short paths fit;
# file bodies, commands and prompts do not, and none of those could ever be proposed as an
# enum member worth reviewing.
REDACT_BOUND: Final = 64
_PREFIX: Final = "[redacted sha256:"

_WORD_SPLIT: Final = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
_SECRET_WORDS: Final = frozenset(
    {
        "apikey",
        "auth",
        "authorization",
        "cookie",
        "credential",
        "credentials",
        "passphrase",
        "passwd",
        "password",
        "privatekey",
        "secret",
        "token",
    }
)
_SECRET_PAIRS: Final = frozenset({("api", "key"), ("access", "key"), ("private", "key")})

# Common credential shapes, searched anywhere in the value.
_SECRET_SHAPES: Final = re.compile(
    "|".join(
        (
            r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{16,}",  # OpenAI, Anthropic, Stripe
            r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
            r"\bgithub_pat_[A-Za-z0-9_]{22,}",  # GitHub fine-grained tokens
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids
            r"\bAIza[0-9A-Za-z_-]{35}",  # Google API keys
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack tokens
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",  # JWTs
            r"\b[Bb][Ee][Aa][Rr][Ee][Rr]\s+[A-Za-z0-9._~+/=-]{12,}",  # bearer tokens
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----",  # PEM private key blocks
        )
    )
)


def is_secret_key(key: str) -> bool:
    """A key whose value is redacted: one of its words names a secret.

    Words are the key split at non-alphanumerics and lower-to-upper case steps, lowercased:
    ``apiKey``, ``api_key``, ``X-Api-Key``, ``accessToken``, ``client_secret`` are secret;
    ``max_tokens``, ``tokenizer`` and ``author`` are not.
    """
    words = [word.lower() for word in _WORD_SPLIT.split(key) if word]
    if any(word in _SECRET_WORDS for word in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words))


def looks_secret(text: str) -> bool:
    """Whether ``text`` holds a common credential shape (API key, token, JWT, PEM key)."""
    return _SECRET_SHAPES.search(text) is not None


def is_redacted(value: Any) -> bool:
    """Whether ``value`` is a digest this module wrote."""
    return type(value) is str and value.startswith(_PREFIX) and value.endswith("]")


def _digest(text: str) -> str:
    data = text.encode("utf-8", "surrogatepass")
    return f"{_PREFIX}{sha256(data).hexdigest()[:16]}]"


def redact_observed_value(key: str, value: Any, bound: int = REDACT_BOUND) -> Any:
    """``value``, or a digest of it when it is a string longer than ``bound`` characters,
    shaped like a secret, or given under a secret-like ``key``.

    >>> redact_observed_value("format", "pdf")
    'pdf'
    >>> redact_observed_value("token", "abc")[:17]
    '[redacted sha256:'
    """
    if type(value) is not str or is_redacted(value):
        return value
    if len(value) > bound or is_secret_key(key) or looks_secret(value):
        return _digest(value)
    return value


def redact_observation(
    observation: ValueObservation, bound: int = REDACT_BOUND
) -> ValueObservation:
    """The observation with its value redacted (the same object when nothing changes)."""
    value = redact_observed_value(observation.key, observation.value, bound)
    if value is observation.value:
        return observation
    return ValueObservation(observation.ref, observation.key, value, observation.count)
