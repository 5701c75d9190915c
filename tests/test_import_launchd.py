"""Hand-written LaunchAgents plists → `import --from launchd` → a jobs.toml that validates,
and whose re-rendered plist fires at the same minutes (the original dicts against the
dicts schedgen.calendar renders), runs the same argv, with the same PATH, environment,
working directory, throttle and RunAtLoad."""

from __future__ import annotations

import plistlib
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from schedgen.commands.import_jobs import run_import
from schedgen.config.load import loads
from schedgen.config.model import Config, Job
from schedgen.importers.document import ImportResult
from schedgen.targets.launchd.render import plist as render_plist
from tests.helpers import schedgen
from tests.oracles import cronsim_minutes, launchd_minutes

WINDOW = (datetime(2028, 2, 1), datetime(2028, 4, 1))  # leap day and month ends

PLISTS: dict[str, dict[str, Any]] = {
    "com.me.backup": {  # one dict, environment, working directory, throttle
        "Label": "com.me.backup",
        "ProgramArguments": ["/Users/me/bin/backup.sh", "--full", "a b"],
        "StartCalendarInterval": {"Hour": 3, "Minute": 0},
        "EnvironmentVariables": {"PATH": "/opt/homebrew/bin:/usr/bin:/bin",
                                 "RESTIC_REPOSITORY": "/Volumes/Backup/restic"},
        "WorkingDirectory": "/Users/me/data",
        "ThrottleInterval": 30,
        "StandardOutPath": "/tmp/backup.log",
    },
    "com.me.funnel": {  # the seed's 10:40 and 16:40, as launchd wants it
        "Label": "com.me.funnel",
        "ProgramArguments": ["/Users/me/dev/note-autolike/process.sh"],
        "StartCalendarInterval": [{"Hour": 10, "Minute": 40}, {"Hour": 16, "Minute": 40}],
        "WorkingDirectory": "/Users/me/dev/note-autolike",
    },
    "org.example.odd": {  # no single cron expression matches these: a list
        "Label": "org.example.odd",
        "Program": "/usr/local/bin/odd",
        "StartCalendarInterval": [
            {"Hour": 9, "Minute": 0}, {"Hour": 17, "Minute": 30},
            {"Day": 1, "Hour": 12, "Minute": 0}, {"Weekday": 5, "Hour": 12, "Minute": 0},
            {"Month": 2, "Day": 29, "Hour": 6, "Minute": 15},
            {"Day": 31, "Hour": 23, "Minute": 59}, {"Weekday": 7, "Minute": 30},
        ],
    },
    "local.friday13": {  # Day and Weekday in one dict: either matches (launchd.plist(5))
        "Label": "local.friday13",
        "ProgramArguments": ["/bin/sh", "-c", "echo boo >> /tmp/boo"],
        "StartCalendarInterval": {"Day": 13, "Weekday": 5, "Hour": 0, "Minute": 0},
    },
    "com.me.sync": {  # StartInterval and RunAtLoad
        "Label": "com.me.sync",
        "ProgramArguments": ["/usr/bin/rsync", "-a", "/Users/me/a/", "/Users/me/b/"],
        "StartInterval": 900,
        "RunAtLoad": True,
    },
    "com.me.hello": {  # RunAtLoad only: @reboot
        "Label": "com.me.hello",
        "ProgramArguments": ["/Users/me/bin/hello"],
        "RunAtLoad": True,
        "Disabled": True,
    },
}
SKIPPED = {
    "com.me.keepalive": {"Label": "com.me.keepalive", "ProgramArguments": ["/x"],
                         "KeepAlive": True},
    "com.me.watch": {"Label": "com.me.watch", "ProgramArguments": ["/x"],
                     "WatchPaths": ["/tmp/in"]},
    "com.me.nothing": {"Label": "com.me.nothing", "ProgramArguments": ["/x"]},
    "com.me.noprogram": {"Label": "com.me.noprogram", "StartInterval": 60},
}


def write_agents(home: Path, plists: dict[str, dict[str, Any]], binary: set[str] = frozenset()
                 ) -> Path:
    folder = home / "Library" / "LaunchAgents"
    folder.mkdir(parents=True, exist_ok=True)
    for label, data in plists.items():
        fmt = plistlib.FMT_BINARY if label in binary else plistlib.FMT_XML
        (folder / f"{label}.plist").write_bytes(plistlib.dumps(data, fmt=fmt))
    return folder


def do_import(tmp_path: Path) -> tuple[ImportResult, Config, dict[str, Job]]:
    result = run_import("launchd", None, None, False)  # reads $HOME/Library/LaunchAgents
    config = loads(result.text, tmp_path / "jobs.toml")
    by_label = {src.removesuffix(".plist"): config.job(name) for name, src in result.origins}
    return result, config, by_label  # type: ignore[return-value]


def calendar(entries: Any) -> list[dict[str, int]]:
    return entries if isinstance(entries, list) else [entries]


def test_plists_round_trip(home: Path, tmp_path: Path) -> None:
    write_agents(home, {**PLISTS, **SKIPPED}, binary={"com.me.funnel"})
    result, config, by_label = do_import(tmp_path)
    assert set(by_label) == set(PLISTS)
    for label, original in PLISTS.items():
        job = by_label[label]
        rendered = plistlib.loads(render_plist(job, config).encode())
        # same argv
        argv = original.get("ProgramArguments", [original.get("Program")])
        if "Program" in original:
            argv = [original["Program"], *argv[1:]]
        assert list(job.command) == argv, label
        # same firing times: original dicts vs imported cron vs re-rendered dicts
        if "StartCalendarInterval" in original:
            dicts = calendar(original["StartCalendarInterval"])
            exprs = [e.text for e in job.schedule]
            assert cronsim_minutes(exprs, *WINDOW) == launchd_minutes(dicts, *WINDOW), label
            assert launchd_minutes(calendar(rendered["StartCalendarInterval"])) == \
                launchd_minutes(dicts), label
        else:
            assert "StartCalendarInterval" not in rendered
        assert rendered.get("StartInterval") == original.get("StartInterval")
        assert rendered["RunAtLoad"] == original.get("RunAtLoad", False)
        # same environment
        env = original.get("EnvironmentVariables", {})
        assert rendered["EnvironmentVariables"]["PATH"] == env.get(
            "PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
        assert dict(job.env) == {k: v for k, v in env.items() if k != "PATH"}
        assert rendered.get("WorkingDirectory", "/") == original.get("WorkingDirectory", "/")
        assert rendered.get("ThrottleInterval") == original.get("ThrottleInterval")
        assert job.enabled is not original.get("Disabled", False)
        assert job.targets == ("launchd",)


def test_names_schedules_and_notes(home: Path, tmp_path: Path) -> None:
    folder = write_agents(home, {**PLISTS, **SKIPPED})
    (folder / "local.schedgen.mine.plist").write_text(
        "<?xml version='1.0'?><!-- generated by schedgen. schedgen-managed --><plist/>")
    (folder / "broken.plist").write_text("not a plist")
    result, config, by_label = do_import(tmp_path)
    names = {label: job.name for label, job in by_label.items()}
    assert names == {"com.me.backup": "backup", "com.me.funnel": "funnel",
                     "org.example.odd": "odd", "local.friday13": "friday13",
                     "com.me.sync": "sync", "com.me.hello": "hello"}
    assert by_label["com.me.funnel"].schedule_text == ("40 10,16 * * *",)
    assert by_label["local.friday13"].schedule_text == ("0 0 13 * 5",)
    assert len(by_label["org.example.odd"].schedule_text) > 1
    assert by_label["com.me.sync"].schedule_text == ("@every 15m",)
    assert by_label["com.me.sync"].run_at_load is True
    assert by_label["com.me.hello"].schedule_text == ("@reboot",)
    notes = [str(n) for n in result.notes]
    assert any("left out 1 plist schedgen manages itself" in n for n in notes)
    assert any(n.startswith("broken.plist: skipped: not a readable plist") for n in notes)
    for label, key in [("com.me.keepalive", "KeepAlive"), ("com.me.watch", "WatchPaths")]:
        assert any(n.startswith(f"{label}.plist: skipped: {key} starts it on events")
                   for n in notes), notes
    assert any(n.startswith("com.me.nothing.plist: skipped: nothing starts it") for n in notes)
    assert any(n.startswith("com.me.noprogram.plist: skipped: it has neither Program")
               for n in notes)
    assert "com.me.backup.plist: StandardOutPath ignored: output goes to the job's schedgen " \
           "run directory" in notes


def test_the_most_common_path_and_working_dir_go_to_defaults(home: Path, tmp_path: Path) -> None:
    write_agents(home, PLISTS)
    result, config, by_label = do_import(tmp_path)
    assert '[defaults]\ntargets = [\n    "launchd",\n]\npath = [\n    "/usr/bin",' in result.text
    assert 'working_dir = "/"\n' in result.text.split("[jobs.")[0]
    assert by_label["com.me.sync"].path == ("/usr/bin", "/bin", "/usr/sbin", "/sbin")


@pytest.mark.parametrize("label", ["com.me.backup", "org.example.odd"])
def test_a_single_plist_file_can_be_given(home: Path, tmp_path: Path, label: str) -> None:
    folder = write_agents(tmp_path / "elsewhere", {label: PLISTS[label]})
    result = run_import("launchd", folder / f"{label}.plist", None, False)
    assert len(result.jobs) == 1
    loads(result.text, tmp_path / "jobs.toml")


def test_cli_import_launchd_to_a_file(home: Path, tmp_path: Path) -> None:
    write_agents(home, {**PLISTS, **SKIPPED})
    dest = tmp_path / "imported.toml"
    out = schedgen("import", "--from", "launchd", "-o", str(dest), env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    assert "wrote" in out.stderr and f"({len(PLISTS)} jobs)" in out.stderr
    assert "com.me.keepalive.plist: skipped: KeepAlive" in out.stderr
    assert schedgen("validate", "-c", str(dest)).returncode == 0
    again = schedgen("import", "--from", "launchd", "-o", str(dest), env={"HOME": str(home)})
    assert again.returncode == 2 and "use --force" in again.stderr


def test_cli_nothing_in_launch_agents(home: Path) -> None:
    out = schedgen("import", "--from", "launchd", env={"HOME": str(home)})
    assert out.returncode == 2 and "nothing to import from launchd" in out.stderr
    bad = schedgen("import", "--from", "anacron", env={"HOME": str(home)})
    assert bad.returncode == 2 and "expected cron, launchd or systemd" in bad.stderr
