"""Start-up work the CLI leaves out, and proof that leaving it out changes nothing."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from schedgen import cli

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
           "systemd.timer.j2", "runtime.bash", "fscheck.sh", "notify.sh", "tzgate.sh"]


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
