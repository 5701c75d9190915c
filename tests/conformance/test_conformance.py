"""The same behaviour, through the CLI, against every registered target.

render -> diff -> apply -> status in sync -> a firing runs the wrapper -> notify and ping
delivered after the run ends -> env values and ping_url masked in `diff` -> ownership
(what this machine did not install is never removed or changed; a "kept" object stays)
-> uninstall leaves the user's own objects byte for byte.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.conformance.drivers import Driver
from tests.helpers import Result, schedgen, write_config
from tests.pinghub import PingHub

FAR = "0 4 1 1 *"  # a schedule that does not fire while a test runs


def config(drv: Driver, tmp: Path, jobs: str, namespace: str = "conform") -> Path:
    return write_config(tmp / "jobs.toml",
                        f'[defaults]\nnamespace = "{namespace}"\n{drv.config}\n{jobs}')


def job(name: str, command: str = "echo hello", schedule: str = FAR, more: str = "") -> str:
    return f'[jobs.{name}]\ncommand = "{command}"\nschedule = "{schedule}"\n{more}\n'


def cli(tmp: Path, *args: str) -> Result:
    r = schedgen(*args, cwd=tmp)
    assert "Traceback" not in r.stderr and "unexpected error" not in r.stderr, r.stderr
    return r


def applied(tmp: Path, *args: str) -> Result:
    r = cli(tmp, "apply", *args)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_render_diff_apply_and_status_in_sync(driver: Driver, tmp_path: Path) -> None:
    config(driver, tmp_path, job("alpha") + job("beta", "echo beta", "*/20 * * * *"))
    r = cli(tmp_path, "render", "--target", driver.name, "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    rendered = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert rendered
    driver.check(rendered)
    r = cli(tmp_path, "diff")
    assert r.returncode == 1 and "alpha" in r.stdout and "beta" in r.stdout, r.stdout
    applied(tmp_path)
    assert driver.installed("alpha") is not None and driver.installed("beta") is not None
    driver.check([p for p in (Path(os.environ["HOME"])).rglob("*") if p.is_file()])
    r = cli(tmp_path, "diff")
    assert r.returncode == 0, r.stdout + r.stderr
    r = cli(tmp_path, "status", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    status = json.loads(r.stdout)
    assert {j["job"] for j in status["jobs"]} == {"alpha", "beta"}
    assert status["drift"] is False and not any(j["drift"] for j in status["jobs"]), status


def _needs_wrapper(driver: Driver) -> None:
    if not driver.runs_wrapper:
        pytest.skip(f"{driver.name}: no wrapper runs a firing (the scheduler runs the command)")


def test_a_firing_runs_the_wrapper(driver: Driver, tmp_path: Path) -> None:
    _needs_wrapper(driver)
    out = tmp_path / "fired"
    config(driver, tmp_path, job("alpha", f"echo $GREETING >> {out}",
                                 more='env = { GREETING = "from-the-scheduler" }'))
    applied(tmp_path)
    assert driver.fire("alpha") == 0
    assert out.read_text() == "from-the-scheduler\n"
    r = cli(tmp_path, "history", "alpha", "--json")
    assert r.returncode == 0, r.stderr
    assert '"ok"' in r.stdout, r.stdout


def test_a_paused_job_skips_its_firings_until_resumed(driver: Driver, tmp_path: Path) -> None:
    out = tmp_path / "fired"
    config(driver, tmp_path, job("alpha", f"echo ran >> {out}"))
    applied(tmp_path)

    def suspended() -> bool:
        obj = json.loads(driver.installed("alpha") or b"{}")
        return obj["spec"]["suspend"] is True

    assert cli(tmp_path, "pause", "alpha").returncode == 0
    if driver.runs_wrapper:
        assert driver.fire("alpha") == 0 and not out.exists()
        runs = json.loads(cli(tmp_path, "history", "alpha", "--json").stdout)["jobs"][0]["runs"]
        assert [r["outcome"] for r in runs] == ["skipped"]
    else:
        assert suspended()
    assert cli(tmp_path, "diff").returncode == 0   # paused is in sync: nothing to apply
    assert cli(tmp_path, "resume", "alpha").returncode == 0
    if driver.runs_wrapper:
        assert driver.fire("alpha") == 0 and out.read_text() == "ran\n"
    else:
        assert not suspended()


def test_notify_and_ping_are_delivered_after_the_run_ends(driver: Driver, tmp_path: Path,
                                                          pinghub: PingHub) -> None:
    told = tmp_path / "told"
    # The notify command outlives the wrapper: it is sent in the background after the run.
    notify = (f'[jobs.alpha.notify]\non = ["failure"]\nping_url = "{pinghub.url}/hc"\n'
              f'command = "sleep 1; echo $SCHEDGEN_EVENT $SCHEDGEN_EXIT_CODE > {told}"\n')
    config(driver, tmp_path, job("alpha", "exit 3") + notify)
    if not driver.runs_wrapper:
        # Nothing of schedgen's runs there: what would never be sent is refused, not dropped.
        r = cli(tmp_path, "validate")
        assert r.returncode == 2, r.stdout + r.stderr
        assert "jobs.alpha.notify.ping_url" in r.stderr and "jobs.alpha.notify.on" in r.stderr
        return
    applied(tmp_path)
    assert driver.fire("alpha") == 3
    seen = pinghub.wait_for(2, timeout=30)
    assert seen[:2] == ["/hc/start", "/hc/3"], seen
    deadline = time.monotonic() + 30
    while not told.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert told.exists(), "the failure notify never ran to its end"
    assert told.read_text() == "failure 3\n"


SECRET, SHORT, NEW = "hunter2-long-secret", "x9Q", "n3w-secret-value"


def _secrets_job(drv: Driver, token: str, short: str, ping: str) -> str:
    # A target that runs no wrapper refuses ping_url (the notify case above). The webhook
    # URL is a secret too (a Slack or Discord one is its own credential).
    hook = ping.replace("hc-ping.example", "hooks.example").replace("uuid", "hook")
    notify = (f'[jobs.alpha.notify]\nping_url = "{ping}"\nwebhook = "{hook}"\n'
              if drv.runs_wrapper else "")
    return job("alpha", more=f'env = {{ TOKEN = "{token}", PIN = "{short}" }}\n{notify}')


def test_env_values_ping_url_and_webhook_are_masked_in_diff(driver: Driver, tmp_path: Path) -> None:
    old_ping, new_ping = "https://hc-ping.example/0ld-uuid-1111", "https://hc-ping.example/n3w-uuid-2222"
    config(driver, tmp_path, _secrets_job(driver, SECRET, SHORT, old_ping))
    shown = []
    for args in (("diff",), ("diff", "--json")):
        shown.append(cli(tmp_path, *args).stdout)
    applied(tmp_path)
    config(driver, tmp_path, _secrets_job(driver, NEW, "z7W", new_ping))
    for args in (("diff",), ("diff", "--json")):
        r = cli(tmp_path, *args)
        assert r.returncode == 1, r.stdout + r.stderr
        shown.append(r.stdout + r.stderr)
    for text in shown:
        for secret in (SECRET, SHORT, NEW, "z7W", "0ld-uuid-1111", "n3w-uuid-2222",
                       "0ld-hook-1111", "n3w-hook-2222"):
            assert secret not in text, f"{secret!r} shown in:\n{text}"
    assert "TOKEN" in shown[2] and "<masked>" in shown[2], "the change is not named at all"


def test_diff_for_a_target_the_jobs_moved_away_from_lists_the_removals(
        driver: Driver, tmp_path: Path) -> None:
    config(driver, tmp_path, job("alpha"))
    applied(tmp_path)
    elsewhere = _elsewhere(driver.name)
    write_config(tmp_path / "jobs.toml", f'[defaults]\nnamespace = "conform"\n{driver.config}'
                 + job("alpha", more=f'targets = ["{elsewhere}"]'))
    plain = cli(tmp_path, "diff", "--json")
    assert plain.returncode == 1, plain.stdout + plain.stderr
    mine = cli(tmp_path, "diff", "--target", driver.name, "--json")
    assert mine.returncode == 1, mine.stdout + mine.stderr
    ours = [c for c in _changes(plain) if c["target"] == driver.name]
    assert ours and all(c["action"] == "delete" for c in ours), ours
    assert [c for c in _changes(mine) if c["target"] == driver.name] == ours


def _changes(r: Result) -> list[dict[str, object]]:
    doc = json.loads(r.stdout)
    return list(doc.get("plan", doc)["changes"])


def _elsewhere(target: str) -> str:
    return "launchd" if target == "cron" else "cron"


def _lenient(target: str) -> str:
    """Another target that takes any cron schedule."""
    return "systemd" if target == "cron" else "cron"


def test_render_refuses_what_validate_refuses(driver: Driver, tmp_path: Path) -> None:
    """`render --target T` shows what every job would be for T, also jobs that go elsewhere:
    a job T cannot fit (day of month AND day of week) is refused as validate refuses it."""
    schedule = "1 1 1-7 * */7"
    config(driver, tmp_path, job("alpha", schedule=schedule))
    v = cli(tmp_path, "validate")
    config(driver, tmp_path, job("alpha", schedule=schedule,
                                 more=f'targets = ["{_lenient(driver.name)}"]'))
    r = cli(tmp_path, "render", "--target", driver.name, "--out", str(tmp_path / "out"))
    assert r.returncode == v.returncode, (v.stderr, r.stderr)
    if v.returncode:
        assert "jobs.alpha" in r.stderr and schedule in r.stderr, r.stderr


def test_uninstall_leaves_the_users_own_objects_byte_exact(driver: Driver,
                                                           tmp_path: Path) -> None:
    driver.put_foreign()
    before = driver.foreign()
    config(driver, tmp_path, job("alpha") + job("beta"))
    applied(tmp_path)
    assert driver.foreign() == before
    r = cli(tmp_path, "uninstall")
    assert r.returncode == 0, r.stdout + r.stderr
    assert driver.installed("alpha") is None and driver.installed("beta") is None
    assert driver.foreign() == before


def test_the_users_object_where_a_job_would_go_is_never_changed(driver: Driver,
                                                                tmp_path: Path) -> None:
    if not driver.put_in_place("alpha"):
        pytest.skip(f"{driver.name}: the user's objects and schedgen's never share a place")
    before = driver.installed("alpha")
    config(driver, tmp_path, job("alpha"))
    r = cli(tmp_path, "apply")
    assert r.returncode == 2 and "nothing was changed" in r.stderr, r.stdout + r.stderr
    assert driver.installed("alpha") == before
    r = cli(tmp_path, "uninstall")
    assert r.returncode == 0, r.stdout + r.stderr
    assert driver.installed("alpha") == before


def test_a_kept_object_stays(driver: Driver, tmp_path: Path) -> None:
    """An object the plan says it keeps (changed by hand since apply) is not removed."""
    if not driver.kept_per_job:
        pytest.skip(f"{driver.name}: one artifact holds every job; a hand-edited part of it "
                    "is taken back with the rest, never kept")
    config(driver, tmp_path, job("alpha") + job("beta"))
    applied(tmp_path)
    driver.edit("beta")
    edited = driver.installed("beta")
    config(driver, tmp_path, job("alpha"))
    plan = cli(tmp_path, "diff", "--prune", "--json")
    kept = [c for c in _changes(plan)
            if c["job"] == "beta" and c["action"] == "kept"]
    assert kept, [(c["job"], c["action"], c["note"]) for c in _changes(plan)]
    r = cli(tmp_path, "apply", "--prune")
    assert r.returncode == 0, r.stdout + r.stderr
    assert driver.installed("beta") == edited, f"said kept, removed anyway:\n{r.stdout}"
    r = cli(tmp_path, "uninstall")
    assert r.returncode == 0, r.stdout + r.stderr
    if any(line.startswith("kept:") and "beta" in line for line in r.stdout.splitlines()):
        assert driver.installed("beta") == edited, f"said kept, removed anyway:\n{r.stdout}"


def test_another_machines_objects_are_never_removed(driver: Driver, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Two machines, one namespace, one place (a cluster): each one's diff, prune and
    uninstall see and remove only what it installed itself."""
    if not driver.shared:
        pytest.skip(f"{driver.name}: what one machine installs no other machine sees")
    config(driver, tmp_path, job("alpha"))
    applied(tmp_path)
    driver.edit("alpha")  # and changed there by hand since: "kept" if it were this one's
    mine = driver.installed("alpha")
    other = tmp_path / "other"
    (other / "home").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(other / "home"))
    config(driver, other, job("beta"))
    applied(other)
    r = cli(other, "diff", "--prune")
    assert r.returncode == 0 and "alpha" not in r.stdout, \
        f"another machine's job is listed here:\n{r.stdout}"
    for args in (("--prune",), ("--prune", "--force")):
        applied(other, *args)
        assert driver.installed("alpha") == mine, f"{args} changed another machine's job"
    r = cli(other, "uninstall")
    assert r.returncode == 0, r.stdout + r.stderr
    assert driver.installed("beta") is None
    assert driver.installed("alpha") == mine, "uninstall removed another machine's job"
