"""Start-up work the CLI leaves out, and proof that leaving it out changes nothing."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from schedgen import cli
from schedgen.render.artifacts import RUNTIME_PARTS

NAMES = [c.name or c.callback.__name__.replace("_", "-")
         for c in cli.app.registered_commands if c.callback is not None]


def test_every_command_has_a_name_the_app_knows() -> None:
    assert {"validate", "render", "diff", "apply", "status", "reconcile"} <= set(NAMES)
    assert len(NAMES) == len(set(NAMES))


@pytest.mark.parametrize("name", NAMES)
def test_the_one_command_app_parses_like_the_whole_app(name: str) -> None:
    one = cli._app_for([name, "--help"])
    assert one is not cli.app and len(one.registered_commands) == 1
    runner = CliRunner()
    for args in ([name, "--help"], [name, "--no-such-option"]):
        whole, alone = runner.invoke(cli.app, args), runner.invoke(one, args)
        assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output)
    assert cli.app.registered_commands != one.registered_commands  # the app is not changed


@pytest.mark.parametrize("argv", [[], ["--help"], ["--version"], ["no-such-command"],
                                  ["-c", "diff"]])
def test_anything_but_a_command_name_gets_the_whole_app(argv: list[str]) -> None:
    assert cli._app_for(argv) is cli.app


SHIPPED = ["job.sh.j2", "crontab.j2", "launchd.plist.j2", "systemd.service.j2",
           "systemd.timer.j2", "notify.sh",
           *("runtime/" + p for p in RUNTIME_PARTS)]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_files_read_straight_from_the_folder_are_the_packaged_ones(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import resources

    from schedgen.render import shipped

    packaged = resources.files("schedgen.templates").joinpath(name).read_text(encoding="utf-8")
    assert shipped.text(name) == packaged
    # Where the package is no folder (a zip), the resource API reads it.
    monkeypatch.setattr(shipped, "_folder", lambda: None)
    assert shipped.text(name) == packaged


CRON_ONLY = """
[defaults]
targets = ["cron"]

[jobs.one]
command = ["echo", "one"]
schedule = "0 * * * *"
"""
# What a cron-only config's diff after an apply must not load (it costs start-up time
# and does nothing; cronsim's explainer: the apply kept the schedules in words).
NOT_FOR_CRON = ("cronsim", "schedgen.targets.launchd", "schedgen.targets.systemd",
                "schedgen.targets.kubernetes", "schedgen.render.tzrender", "schedgen.render.tzgate", "schedgen.schedule.tzwiden",
                "schedgen.config.kubernetes", "schedgen.importers", "schedgen.outcomes",
                "zoneinfo")


def _loaded_by(args: list[str], env: dict[str, str]) -> tuple[int, list[str]]:
    import os
    import subprocess
    import sys

    code = ("import atexit, sys\n"
            f"bad = {NOT_FOR_CRON!r}\n"
            "atexit.register(lambda: print(sorted(m for m in sys.modules "
            "if m.startswith(bad)), file=sys.stderr))\n"
            f"sys.argv = ['schedgen', *{args!r}]\n"
            "from schedgen import cli\ncli.main()\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, **env}, timeout=120)
    return p.returncode, eval(p.stderr.strip().splitlines()[-1])  # noqa: S307 - our own repr


def test_a_cron_only_diff_loads_no_other_targets_code(tmp_path, fake_crontab) -> None:
    from tests.helpers import schedgen as run_cli
    from tests.helpers import write_config

    cfg = write_config(tmp_path / "jobs.toml", CRON_ONLY)
    assert run_cli("apply", "-c", str(cfg)).returncode == 0
    assert _loaded_by(["diff", "-c", str(cfg)], fake_crontab.env) == (0, [])
    # ...and a zoned job brings the zone code in (the check above can fail).
    write_config(cfg, CRON_ONLY + 'timezone = "Europe/Kyiv"\n')
    code, loaded = _loaded_by(["diff", "-c", str(cfg)], fake_crontab.env)
    assert code == 1 and "schedgen.render.tzrender" in loaded and "zoneinfo" in loaded
    assert not [m for m in loaded if "launchd" in m or "kube" in m or "systemd" in m]


def test_a_cron_only_status_loads_no_kubernetes_code(tmp_path, fake_crontab) -> None:
    from tests.helpers import schedgen as run_cli
    from tests.helpers import write_config

    cfg = write_config(tmp_path / "jobs.toml", CRON_ONLY)
    assert run_cli("apply", "-c", str(cfg)).returncode == 0
    code, loaded = _loaded_by(["status", "-c", str(cfg)], fake_crontab.env)
    assert code == 0 and not [m for m in loaded if "kube" in m], loaded


def test_each_target_loaded_on_demand_asks_for_the_kinds_its_own_plan_does() -> None:
    from schedgen.targets import registry
    from schedgen.targets.kubernetes.cronjobs import KIND
    from schedgen.targets.systemd.plan import KINDS

    lazy = {t.name: t for t in registry.all_targets()}
    own = {"launchd": ("plist",), "cron": ("cron", "crond"), "systemd": KINDS,
           "kubernetes": (KIND,)}
    assert [e.name for e in registry.ENTRIES] == list(own)
    for name, kinds in own.items():
        target = lazy[name]
        assert isinstance(target, registry._OnDemand) and target.kinds == kinds
        assert registry.get(name).kinds == kinds and registry.get(name).name == name
        assert target._loaded().name == name
