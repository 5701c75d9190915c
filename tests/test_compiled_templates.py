"""Templates run from their stored code (render/compiled.py) give jinja2's text, byte for
byte, or jinja2 renders them: compared over many varied jobs, for every template that
takes that path, with the fallback shut off so that a silent fallback cannot pass."""

from __future__ import annotations

import random
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from schedgen.config.load import loads
from schedgen.config.model import Config, Job, Lock, Logs, Notify, Queue
from schedgen.render import artifacts, compiled
from schedgen.targets.cron import render as cron_render
from schedgen.targets.systemd import render as sd_render
from tests.helpers import schedgen_process, write_config

FAST = ("job.sh.j2", "crontab.j2", "crond.j2", "systemd.service.j2", "systemd.timer.j2")

SCHEDULES = ('"*/5 * * * *"', '"0 3 * * 1-5"', '"@daily"', '"@every 10m"', '"@reboot"',
             '["15 1 * * *", "45 13 * * 6"]', '"0 0 1 1 *"')
TEXTS = ("", "plain", "it's 100% \"quoted\" $HOME `x` \\ é ✓", "tab\there", "{job} {run_id}")
WORDS = ("echo", "a b", "it's", "{item}", "x{run_id}y", "$(rm -rf /)", "é", "", "--flag=1")


def _config(rng: random.Random, n: int) -> str:
    out = ['[defaults]\ntargets = ["cron", "systemd"]\n']
    for i in range(n):
        sched = rng.choice(SCHEDULES)
        out.append(f'[jobs.j{i}]\nschedule = {sched}\ncommand = ["echo", "{i}"]\n')
    return "\n".join(out)


def _vary(job: Job, rng: random.Random, tmp: Path) -> Job:
    """Every field the job file, the crontab line or the units are made from."""
    def cmd() -> Any:
        if rng.random() < 0.3:
            return rng.choice(TEXTS) or "true"
        return tuple(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))

    def maybe(value: Any, p: float = 0.5) -> Any:
        return value if rng.random() < p else None

    notify = maybe(Notify(
        on=tuple(rng.sample(("failure", "recovery", "missed"), rng.randint(0, 3))),
        command=maybe(cmd()), ping_url=maybe("https://hc.example/ping/x?a=1&b='2'"),
        mail=tuple(rng.sample(("a@example.org", "b o@example.org"), rng.randint(0, 2))),
        webhook=maybe("https://hooks.example/x"), webhook_format=rng.choice(
            ("json", "slack", "discord", "teams")),
        after=rng.choice((1, 2, 5)), sendmail=maybe("/usr/sbin/sendmail -t")))
    queue = maybe(Queue(tmp / "in box", tmp / "proc", tmp / "done", tmp / "failed",
                        rng.choice(("*.csv", "*", "a'b*")), rng.choice((0, 1, 50)),
                        rng.choice((60, 3600)), rng.choice((1, 3)), rng.random() < 0.5), 0.3)
    return job._replace(
        description=rng.choice(TEXTS), command=cmd(), smoke=maybe(cmd(), 0.3),
        env=tuple((f"V{k}", rng.choice(TEXTS)) for k in range(rng.randint(0, 3))),
        env_file=maybe(tmp / "env file"), working_dir=maybe(tmp / "work dir's"),
        timeout=rng.choice((None, 0, 30, 86400)),
        lock=maybe(Lock(rng.choice(("", "shared", "a b")), rng.choice((0, 5)),
                        rng.choice((75, 0, 99)), rng.choice(("skip", "wait", "replace"))), 0.7),
        queue=queue,
        logs=Logs(rng.choice((65536, 10 ** 6, 1)), rng.choice((0, 5)), rng.choice((0, 30))),
        path=tuple(rng.sample(("/usr/bin", "/bin", "/opt/my tools/bin", "/x'y"),
                              rng.randint(1, 4))),
        notify=notify, metrics_dir=maybe(tmp / "metrics", 0.3),
        timezone=rng.choice((None, None, "Europe/Paris", "America/New_York")),
        catch_up=rng.choice(("none", "once")), max_lateness=rng.choice((3600, 60)),
        random_delay=rng.choice((0, 0, 30)), random_delay_stable=rng.random() < 0.5,
        retries=rng.choice((0, 0, 2)), retry_delay=rng.choice((30, 5)),
        backoff=rng.choice((2.0, 1.5)), user=maybe("nobody", 0.2))


def _texts(config: Config) -> list[str]:
    out: list[str] = []
    for job in config.jobs:
        for standalone in (False, True):
            try:
                out.append(artifacts.wrapper(job, config, standalone))
            except Exception as exc:  # noqa: BLE001  both paths must fail alike, too
                out.append(f"error {type(exc).__name__}")
        for make in (sd_render.service, sd_render.timer):
            try:
                out.append(make(job, config))
            except Exception as exc:  # noqa: BLE001
                out.append(f"error {type(exc).__name__}")
    out.append(cron_render.cron_block(config, config.jobs))
    out.append(cron_render.crond_file(config, config.jobs))
    return out


@pytest.fixture
def paths_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Switch between jinja2 alone and the stored code alone (no fallback)."""
    env = artifacts._env()
    env.filters.update({**cron_render._FILTERS, "sd_escape": sd_render.sd_escape})
    runners = {n: compiled.runner(compiled.code_of(
        env.compile(artifacts._source(n), n, raw=True), n)) for n in FAST}
    used: dict[str, int] = {}
    state: dict[str, Any] = {"fast": False, "used": used}

    def load(_folder: Path, name: str, _want: str) -> compiled.Root | None:
        if not state["fast"]:
            return None
        run = runners[name]

        def counted(values: dict[str, Any], filters: compiled.Filters) -> str:
            text = run(values, filters)
            used[name] = used.get(name, 0) + 1
            return text
        return counted

    def no_jinja() -> Any:
        raise AssertionError("jinja2 rendered on the fast path")

    real_env = artifacts._env
    monkeypatch.setattr(compiled, "load", load)
    monkeypatch.setattr(artifacts, "_env", lambda: no_jinja() if state["fast"] else real_env())
    artifacts._RUNNERS.clear()
    yield state
    artifacts._RUNNERS.clear()


def test_the_stored_code_renders_jinja2s_text_for_varied_jobs(
        tmp_path: Path, paths_only: dict[str, Any]) -> None:
    rng = random.Random(41)
    for round_ in range(12):
        base = loads(_config(rng, 12), tmp_path / f"c{round_}" / "jobs.toml")
        config = base._replace(jobs=tuple(_vary(j, rng, tmp_path) for j in base.jobs))
        paths_only["fast"] = False
        artifacts._RUNNERS.clear()
        with_jinja = _texts(config)
        paths_only["fast"] = True
        artifacts._RUNNERS.clear()
        try:
            fast = _texts(config)
        except AssertionError:
            pytest.fail("a template fell back to jinja2 for an ordinary job")
        assert fast == with_jinja
    assert set(paths_only["used"]) == set(FAST)
    assert paths_only["used"]["job.sh.j2"] >= 12 * 12 * 2 - 20  # bar the jobs both refuse


def test_what_the_small_runtime_does_not_do_goes_to_jinja2() -> None:
    env = artifacts._env()
    for src in ("{{ range(3) | list }}", "{{ missing_name }}", "{% for x in xs %}{{ loop.length }}{% endfor %}",
                "{{ xs | first }}", "{% macro m(a, b=1) %}{{ a }}{% endmacro %}{{ m(1) }}",
                "{{ 'x' if false }}{{ ('y' if false) | upper }}"):
        code = compiled.code_of(env.compile(src, "t.j2", raw=True), "t.j2")
        assert code is not None
        with pytest.raises(compiled.Unsupported):
            compiled.runner(code)({"xs": [1, 2]}, artifacts._FILTERS)
    code = compiled.code_of(env.compile(
        "{% for x in xs %}{{ x }}{{ ',' if not loop.last }}{% endfor %}|{{ xs | join('-') }}",
        "t.j2", raw=True), "t.j2")
    assert compiled.runner(code)({"xs": [1, 2, 3]}, artifacts._FILTERS) == "1,2,3|1-2-3"


def test_code_that_renders_otherwise_is_not_stored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = loads(_config(random.Random(1), 2), tmp_path / "jobs.toml")
    real = compiled.runner
    monkeypatch.setattr(compiled, "runner",
                        lambda code: (lambda v, f: real(code)(v, f) + "#"))
    artifacts._RUNNERS.clear()
    artifacts._LEARNT.clear()
    with artifacts.storing_compiled_templates():
        artifacts.wrapper(config.jobs[0], config)
    assert not compiled.file_of(artifacts._folder(), "job.sh.j2").exists()
    assert artifacts._RUNNERS.get((artifacts._folder(), "job.sh.j2")) is None


CONFIG = """
[defaults]
targets = ["cron"]

[jobs.a]
command = ["echo", "a"]
schedule = "*/5 * * * *"

[jobs.b]
command = "echo b | tr b c"
schedule = "@daily"
"""


def test_an_apply_with_stored_code_never_imports_jinja2(
        tmp_path: Path, home: Path, fake_crontab: Any) -> None:
    cfg = write_config(tmp_path / "jobs.toml", CONFIG)
    first = schedgen_process("apply", "-c", str(cfg))
    assert first.returncode == 0, first.stderr
    folder = next((home / ".cache/schedgen").glob("jinja-*"))
    assert {p.name for p in folder.glob("*.code")} == {"job.sh.j2.code", "crontab.j2.code"}
    installed = {p.name: p.read_bytes() for p in (home / ".local/share/schedgen/wrappers").iterdir()}
    table = fake_crontab.file.read_bytes()
    # Everything again from nothing, in a process that reports whether jinja2 came in.
    shutil.rmtree(home / ".local")
    fake_crontab.file.unlink()
    again = schedgen_process("apply", "-c", str(cfg), env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert again.returncode == 0, again.stderr
    assert " schedgen.render.compiled\n" in again.stderr  # the report is there
    assert "jinja2" not in again.stderr
    assert {p.name: p.read_bytes()
            for p in (home / ".local/share/schedgen/wrappers").iterdir()} == installed
    assert fake_crontab.file.read_bytes() == table


def test_a_damaged_or_foreign_code_file_is_ignored(
        tmp_path: Path, home: Path, fake_crontab: Any) -> None:
    cfg = write_config(tmp_path / "jobs.toml", CONFIG)
    assert schedgen_process("render", "-c", str(cfg), "--out", str(tmp_path / "a")).returncode == 0
    folder = next((home / ".cache/schedgen").glob("jinja-*"))
    stored = folder / "job.sh.j2.code"
    key = stored.read_bytes().partition(b"\n")[0]
    for damage in (b"garbage", key + b"\ngarbage", b"0" * 64 + b"\n" + b"x"):
        stored.write_bytes(damage)
        r = schedgen_process("render", "-c", str(cfg), "--out", str(tmp_path / "b"))
        assert r.returncode == 0, r.stderr
        for f in (tmp_path / "a").rglob("*"):
            if f.is_file():
                assert f.read_bytes() == (tmp_path / "b" / f.relative_to(tmp_path / "a")).read_bytes()
        assert stored.read_bytes().partition(b"\n")[0] == key  # stored afresh
    assert sys.version  # the key holds Python's version: another Python reads none of it
