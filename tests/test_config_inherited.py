"""A value given once in [defaults] (or built in) is parsed once and means the same for
every job that inherits it: its problem is still reported for each of them, on its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedgen.config.load import loads
from schedgen.errors import ConfigError

JOBS = "".join(f'\n[jobs.j{i}]\ncommand = ["true"]\nschedule = "@daily"\n' for i in range(3))


def test_a_bad_default_is_a_problem_of_every_job_that_inherits_it(tmp_path: Path) -> None:
    text = ('[defaults]\ntimeout = "soon"\n[defaults.logs]\nkeep = -1\n' + JOBS
            + '\n[jobs.own]\ncommand = ["true"]\nschedule = "@daily"\ntimeout = "5m"\n'
              '[jobs.own.logs]\nkeep = 2\n')
    with pytest.raises(ConfigError) as info:
        loads(text, tmp_path / "jobs.toml")
    found = [(p.where, p.line) for p in info.value.problems]
    lines = text.splitlines()
    header = {f"j{i}": lines.index(f"[jobs.j{i}]") + 1 for i in range(3)}
    assert sorted(found) == sorted(
        [(f"jobs.j{i}.timeout", header[f"j{i}"]) for i in range(3)]
        + [(f"jobs.j{i}.logs.keep", header[f"j{i}"]) for i in range(3)])
    assert len({p.message for p in info.value.problems if p.where.endswith("timeout")}) == 1


def test_inherited_values_are_the_same_as_given_ones(tmp_path: Path) -> None:
    given = "".join(f'\n[jobs.j{i}]\ncommand = ["true"]\nschedule = "@daily"\n'
                    f'log_root = "~/logs"\npath = ["/bin"]\ntimeout = "5m"\n'
                    f'[jobs.j{i}.logs]\nmax_size = "1MB"\n' for i in range(3))
    inherited = ('[defaults]\nlog_root = "~/logs"\npath = ["/bin"]\ntimeout = "5m"\n'
                 '[defaults.logs]\nmax_size = "1MB"\n' + JOBS)
    a = loads(given, tmp_path / "jobs.toml")
    b = loads(inherited, tmp_path / "jobs.toml")
    assert a.jobs == b.jobs
    assert b.jobs[0].logs.max_size == 1_000_000 and b.jobs[0].timeout == 300


def test_a_header_with_blanks_and_quotes_is_still_found(tmp_path: Path) -> None:
    text = '[ jobs . "odd" ]\ncommand = ["true"]\nschedule = "@dialy"\n'
    with pytest.raises(ConfigError) as info:
        loads(text, tmp_path / "jobs.toml")
    assert [(p.where, p.line) for p in info.value.problems] == [("jobs.odd.schedule", 3)]
