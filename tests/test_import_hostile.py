"""import never crashes on what a unit folder or a crontab can hold, and stays linear."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from schedgen.importers.document import job_name
from tests.helpers import schedgen_process


def _units(folder: Path, files: dict[bytes, bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        with open(os.path.join(bytes(folder), name), "wb") as f:
            f.write(body)
    return folder


def test_a_unit_with_latin1_bytes_is_imported_without_them(tmp_path: Path) -> None:
    folder = _units(tmp_path / "units", {
        b"sync.timer": b"[Timer]\nOnCalendar=daily\n",
        b"sync.service": b"[Unit]\nDescription=caf\xe9 sync\n[Service]\n"
                         b"ExecStart=/usr/bin/rsync -a /a /b\nEnvironment=WHO=Jos\xe9\n",
    })
    out = tmp_path / "jobs.toml"
    r = schedgen_process("import", "--from", "systemd", "--file", str(folder), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "sync.service: lines 2, 5 not UTF-8: ignored, as systemd ignores them" in r.stderr
    doc = tomllib.loads(out.read_bytes().decode("utf-8"))
    assert doc["jobs"]["sync"]["command"] == ["/usr/bin/rsync", "-a", "/a", "/b"]
    assert "description" not in doc["jobs"]["sync"]


def test_a_timer_whose_unit_is_a_path_is_skipped_not_followed(tmp_path: Path) -> None:
    folder = _units(tmp_path / "units", {
        b"evil.timer": b"[Timer]\nOnCalendar=daily\nUnit=../../../../etc/passwd\n",
        b"up.timer": b"[Timer]\nOnCalendar=daily\nUnit=../units/ok.service\n",
        b"ok.timer": b"[Timer]\nOnCalendar=hourly\n",
        b"ok.service": b"[Service]\nExecStart=/bin/true\n",
        b"caf\xe9.timer": b"[Timer]\nOnCalendar=daily\n",
        b"caf\xe9.service": b"[Service]\nExecStart=/bin/true\n",
    })
    r = schedgen_process("import", "--from", "systemd", "--file", str(folder))
    assert r.returncode == 0, r.stderr
    assert "evil.timer: skipped: Unit=../../../../etc/passwd is not the name of a service " \
           "unit (a unit name, never a path)" in r.stderr
    assert "up.timer: skipped: Unit=../units/ok.service" in r.stderr
    assert "caf\\xe9.timer: skipped: not a name systemd accepts for a unit" in r.stderr
    assert list(tomllib.loads(r.stdout)["jobs"]) == ["ok"]
    # Alone, it is the one timer: nothing to import, said, not a crash.
    r = schedgen_process("import", "--from", "systemd", "--file", str(folder / "evil.timer"))
    assert r.returncode == 2 and "unexpected error" not in r.stderr, r.stderr


def test_many_jobs_of_one_program_are_named_in_one_pass() -> None:
    # Each name used to count up from 2 past every name taken before it (quadratic).
    taken: set[str] = set()
    tried: dict[str, int] = {}
    names = [job_name("backup", taken, tried) for _ in range(5)]
    assert names == ["backup", "backup-2", "backup-3", "backup-4", "backup-5"]
    taken.add("sync-2")
    assert [job_name("sync", taken, tried) for _ in range(3)] == ["sync", "sync-3", "sync-4"]
    assert tried == {"backup": 5, "sync": 4}


def _shlex_words(command: str) -> list[str]:
    import shlex

    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def test_a_plain_command_splits_as_shlex_splits_it() -> None:
    # A command with no quote, escape or comment is split by one regex; shlex (kept for
    # the rest) gives the same words for every such command.
    import random

    from schedgen.importers.document import _SHLEX_SPECIAL, _words

    alphabet = "ab/.-_=~*?$%{}[]+:,@!1 \t\r\n();<>|&é\u00a0\u2028"
    rng = random.Random(41)
    cases = ["cd /srv && ./run.py nightly>>log 2>&1", "a;b||c&&(d)|e &", "x>y<z", "",
             "  ", "env A=1 B=2 nice -n5 ./x.sh --f=1", "echo a\u00a0b"]
    cases += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(30)))
              for _ in range(5000)]
    for command in cases:
        assert _SHLEX_SPECIAL.search(command) is None
        assert _words(command) == _shlex_words(command), repr(command)
    # Quotes, escapes and comments still go through shlex.
    for command in ("echo 'a b'", 'echo "a;b"', "echo a\\ b", "echo a #c"):
        assert _words(command) == _shlex_words(command)
