"""apply, status and import cost work in proportion to their jobs: counted, not timed.

Each test runs the same step at two sizes and counts the work that used to grow with
the square of the jobs (bytes hashed, record scans, documents parsed).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from schedgen.importers import document
from schedgen.outcomes import missed
from schedgen.plan import changes as p
from schedgen.targets.cron.importer import parse_crontab
from tests.fakes import FakeCrontab
from tests.helpers import schedgen, write_config


def _config(n: int) -> str:
    return '[defaults]\ntargets = ["cron"]\n' + "".join(
        f'\n[jobs.job-{i:03d}]\ncommand = ["/bin/true", "{i}"]\nschedule = "{i % 60} * * * *"\n'
        for i in range(n))


def _block_hashes(n: int, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many times an apply of n cron jobs hashes the crontab block."""
    hashed = [0]
    real = p.digest

    def counting(text: str) -> str:
        hashed[0] += "# BEGIN schedgen" in text
        return real(text)

    monkeypatch.setattr(p, "digest", counting)
    config = write_config(tmp / f"{n}" / "jobs.toml", _config(n))
    r = schedgen("apply", "-c", str(config))
    monkeypatch.setattr(p, "digest", real)
    assert r.returncode == 0, r.stderr
    assert schedgen("uninstall", "-c", str(config)).returncode == 0
    return hashed[0]


def test_a_first_install_hashes_the_crontab_block_a_bounded_number_of_times(
        fake_crontab: FakeCrontab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Recording the settings of each cron job hashed the whole block (every job's line)
    # once per job: quadratic in the jobs.
    small, big = _block_hashes(10, tmp_path, monkeypatch), _block_hashes(40, tmp_path, monkeypatch)
    assert max(small, big) <= 3, (small, big)  # it was 12 and 41


def test_status_indexes_the_record_once(fake_crontab: FakeCrontab, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # Each job's install time was looked up by a scan of the whole record.
    config = write_config(tmp_path / "jobs.toml", _config(30))
    assert schedgen("apply", "-c", str(config)).returncode == 0
    built: list[int] = []
    real = missed.Installs.__init__

    def counting(self: missed.Installs, record: missed.Record) -> None:
        built.append(len(record.entries))
        real(self, record)

    monkeypatch.setattr(missed.Installs, "__init__", counting)
    r = schedgen("status", "-c", str(config))
    assert r.returncode == 0, r.stderr
    assert built == [32]  # 30 job files, the runtime and the crontab block, indexed once


def test_import_validates_the_document_it_wrote_without_reading_it_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = ("MAILTO=me@example.org\nSHELL=/bin/bash\nPATH=/usr/bin:/bin\nTZ=UTC\n"
             "HOME=/srv\nX = 'a b'\n"
             + "".join(f"{i % 60} * * * * cd /srv && ./run.sh --n {i} >> log 2>&1\n"
                       for i in range(50))
             + "@reboot echo 'hi there' # note\n*/5 * * * * date +\\%F\n")
    found, _ = parse_crontab(table, "crontab")
    named = [(document.job_name(f.name_hint, set(), None) + f"-{i}", f)
             for i, f in enumerate(found)]
    text, doc = document._toml(named, "cron", "crontab")
    # What the loader is given is what tomllib reads from the text written.
    assert document._as_read(doc) == tomllib.loads(text)
    parsed: list[str] = []
    real = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda s: parsed.append(s) or real(s))
    result = document.build(found, "cron", "crontab", tmp_path / "jobs.toml")
    assert len(result.jobs) == len(found) and parsed == []
