"""One boundary: expected failures exit with their documented code, a bug exits 70
with one line that says where the log (traceback, version, platform) is."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import pytest

from schedgen import __version__, cli, error_handler
from schedgen.commands import validate
from schedgen.errors import EXIT_BUG, EXIT_INPUT, EXIT_SYSTEM, RecordError, UsageError
from tests.helpers import schedgen_process, write_config


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
            *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["schedgen", *args])
    with pytest.raises(SystemExit) as info:
        cli.main()
    code = info.value.code
    return code if isinstance(code, int) else 1, capsys.readouterr().err


def test_a_bug_is_one_line_exit_70_and_a_log(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path, home: Path) -> None:
    def broken(path: Path) -> None:
        raise KeyError("no such thing\nsecond line")

    monkeypatch.setattr(validate, "validate", broken)
    code, err = run_cli(monkeypatch, capsys, "validate", "-c", str(tmp_path / "jobs.toml"))
    assert code == EXIT_BUG == 70
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "a bug in schedgen (KeyError" in err
    log = error_handler.log_path()
    assert str(log) in err and log.is_relative_to(home)
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "in broken" in text
    assert f"schedgen {__version__}" in text and platform.platform() in text
    assert "argv: ['schedgen', 'validate'" in text
    assert log.stat().st_mode & 0o777 == 0o600


def test_without_a_writable_state_dir_the_log_goes_to_the_temp_dir(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setattr(error_handler, "log_path", lambda: blocked / "schedgen.log")
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path / "tmp"))
    lines: list[str] = []
    assert error_handler.run(lambda: 1 / 0, lines.append) == EXIT_BUG
    assert str(tmp_path / "tmp") in lines[0] and "ZeroDivisionError" in lines[0]


@pytest.mark.parametrize("exc, code", [
    (UsageError("bad option"), EXIT_INPUT),
    (RecordError("damaged"), EXIT_SYSTEM),
    (KeyboardInterrupt(), 130),
])
def test_expected_failures_keep_their_codes(exc: BaseException, code: int) -> None:
    def fail() -> None:
        raise exc

    lines: list[str] = []
    assert error_handler.run(fail, lines.append) == code
    assert not error_handler.log_path().exists()


def test_exit_codes_through_a_real_process(tmp_path: Path) -> None:
    assert schedgen_process("validate", "-c", str(tmp_path / "none.toml")).returncode == EXIT_INPUT
    cfg = write_config(tmp_path / "jobs.toml", '[jobs.a]\ncommand = "true"\nschedule = "@daily"\n')
    r = schedgen_process("validate", "-c", str(cfg))
    assert r.returncode == 0 and "valid, 1 job" in r.stdout
