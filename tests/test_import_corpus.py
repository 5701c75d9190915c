"""The real-world corpus (crontabs and plists from public repositories), imported file by
file and checked line by line against an oracle (benchmarks/corpus_import.py): nothing
crashes, nothing is imported wrongly without a note, nothing is dropped without a reason.
Skipped when the corpus is not there; it is read in place, never copied."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

_SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "corpus_import.py"


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("corpus_import", _SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("corpus_import", module)
    spec.loader.exec_module(module)
    return module


checker = _checker()
CORPUS = checker.find_corpus()


@pytest.mark.skipif(CORPUS is None, reason="corpus not found (set SCHEDGEN_CORPUS)")
def test_every_corpus_file_imports_with_everything_accounted_for() -> None:
    assert CORPUS is not None
    tallies = checker.run(CORPUS)
    report = checker.report(tallies)
    cron, system, launchd = tallies["cron"], tallies["cron --system"], tallies["launchd"]
    assert cron.files == len(list((CORPUS / "cron").iterdir())) and cron.files > 0
    assert launchd.files == len(list((CORPUS / "launchd").glob("*.plist"))) > 0
    for tally in (cron, system, launchd):
        assert tally.failures == [], report
        assert sum(tally.buckets.values()) == tally.seen, report
        assert tally.buckets["exact"] + tally.buckets["exact, with a note"] > 0, report
    # the user field is never the program: every system line is imported or skipped for it
    assert system.seen > 0 and system.buckets["differs, with a note"] == 0, report


@pytest.mark.skipif(CORPUS is None, reason="corpus not found (set SCHEDGEN_CORPUS)")
def test_as_a_user_named_in_no_system_crontab_their_lines_are_system_jobs_of_their_users(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from schedgen.importers import cron_system as import_cron_system

    monkeypatch.setattr(import_cron_system, "current_user", lambda: "someone-else")
    assert CORPUS is not None
    system = checker.run(CORPUS, ("cron --system",))["cron --system"]
    assert system.failures == [], checker.report({"cron --system": system})
    # who imports does not matter: each line is the machine's, run as its own user field
    assert system.buckets["exact"] + system.buckets["exact, with a note"] == system.seen > 0
