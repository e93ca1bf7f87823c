"""Storage options for session URLs: where they come from, and that they are never shown."""

from __future__ import annotations

import argparse
import functools
import json
import pickle
from pathlib import Path

import pytest

from pytest_entropy.cli.app import main
from pytest_entropy.cli.common import engine_options_of, read_options_of
from pytest_entropy.core.errors import EntropyInputError
from pytest_entropy.ingest.base import ReadOptions
from pytest_entropy.run.corpus import CorpusPlan, _read_one
from pytest_entropy.sources.urls import redact_storage_secrets

SECRET = "entropy-unit-secret-V7pQ2"
OPTIONS = {
    "key": "AKIAUNITTESTKEY00001",
    "secret": SECRET,
    "client_kwargs": {"endpoint_url": "http://127.0.0.1:9", "headers": [SECRET + "-2"]},
}


def test_secrets_are_masked_and_public_settings_kept() -> None:
    text = f"denied for AKIAUNITTESTKEY00001 with {SECRET}-2 at http://127.0.0.1:9"
    masked = redact_storage_secrets(text, OPTIONS)
    assert masked == "denied for *** with *** at http://127.0.0.1:9"
    assert redact_storage_secrets(text, None) == text


def test_read_options_keep_storage_options_out_of_their_repr_but_pickle_them() -> None:
    options = ReadOptions(session_format="fabric", storage_options=OPTIONS)
    task = functools.partial(_read_one, plan=CorpusPlan(options))
    assert SECRET not in repr(options) and SECRET not in repr(task)
    assert "AKIAUNITTESTKEY00001" not in repr(task)
    assert pickle.loads(pickle.dumps(options)).storage_options == OPTIONS


def _namespace(**values: object) -> argparse.Namespace:
    defaults: dict[str, object] = {
        "format": "auto",
        "sessions": ["s3://bucket/sessions/"],
        "storage_options": None,
        "engine": None,
        "jobs": 1,
        "scheduler": None,
        "scheduler_timeout": None,
    }
    return argparse.Namespace(**{**defaults, **values})


def test_the_flag_beats_the_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.entropy]\nscheduler-timeout = 2.5\n[tool.entropy.storage-options]\nanon = true\n"
    )
    monkeypatch.chdir(tmp_path)
    assert read_options_of(_namespace(), None).storage_options == {"anon": True}
    flagged = _namespace(storage_options=json.dumps({"anon": False}))
    assert read_options_of(flagged, None).storage_options == {"anon": False}
    # Local sources never read the configuration for storage options.
    assert read_options_of(_namespace(sessions=["logs"]), None).storage_options is None
    scheduled = _namespace(scheduler="tcp://127.0.0.1:8786")
    assert engine_options_of(scheduled).scheduler_timeout == 2.5
    given = _namespace(scheduler="tcp://127.0.0.1:8786", scheduler_timeout=4.0)
    assert engine_options_of(given).scheduler_timeout == 4.0
    assert engine_options_of(_namespace()).scheduler_timeout == 10.0


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        (f'storage-options = "{SECRET}"', "storage-options must be a table"),
        ("scheduler-timeout = 0", "scheduler-timeout must be a positive number"),
        ("scheduler-timeout = true", "scheduler-timeout must be a positive number"),
    ],
)
def test_wrong_configuration_values_are_named_not_echoed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, problem: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.entropy]\n{setting}\n")
    monkeypatch.chdir(tmp_path)
    # Reading the configuration checks every setting in it, whichever one is wanted.
    with pytest.raises(EntropyInputError, match=problem) as raised:
        engine_options_of(_namespace(scheduler="tcp://127.0.0.1:8786"))
    assert SECRET not in str(raised.value)
    assert "pyproject.toml" in str(raised.value)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (f'{{"secret": "{SECRET}"', "--storage-options is not valid JSON"),
        (f'["{SECRET}"]', "--storage-options must be a table"),
    ],
)
def test_a_wrong_flag_value_exits_2_without_echoing_it(
    capsys: pytest.CaptureFixture[str], value: str, problem: str
) -> None:
    status = main(["measure", "--sessions", "memory://x/", "--storage-options", value])
    captured = capsys.readouterr()
    assert status == 2
    assert problem in captured.err
    assert SECRET not in captured.out + captured.err


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf"])
def test_scheduler_timeout_must_be_a_positive_number(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    status = main(["measure", "--sessions", "x", "--scheduler-timeout", value])
    assert status == 2
    assert "--scheduler-timeout" in capsys.readouterr().err
