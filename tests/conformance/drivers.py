"""What the conformance suite needs to know of each target, and nothing it could get wrong.

A driver sets its target's scheduler program up for one test (the real one where it
can run here, else the fake that behaves like it), names the config lines that send a
job there, fires a job the way its scheduler would, and puts and reads back an object
of the scheduler's that schedgen did not install. Every case in the suite is run for
each target the registry lists (`targets()`); a registered target without a driver
fails the suite, so a new target brings its driver with it.
"""

from __future__ import annotations

import json
import os
import plistlib
import subprocess
from pathlib import Path

import pytest

from schedgen.targets.registry import all_targets
from schedgen.targets.wrappers import WrapperTarget
from tests.fake_kubectl import FakeKubectl
from tests.fakes import FakeLaunchctl
from tests.helpers import write_executable
from tests.sdmanager import UserManager


def targets() -> list[str]:
    """Every target the registry lists, but the wrappers every machine target shares."""
    return [t.name for t in all_targets() if t.name != WrapperTarget.name]


def _run_env(job_env: dict[str, str] | None = None) -> dict[str, str]:
    """A scheduler's bare environment: what cron, launchd and systemd start a job with."""
    return {"HOME": os.environ["HOME"], "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LOGNAME": "root", "SHELL": "/bin/sh", "LANG": "C.UTF-8", **(job_env or {})}


class Driver:
    name = ""
    runs_wrapper = True  # a firing runs schedgen's wrapper on this machine
    shared = False  # another machine's install can be seen here (one cluster)
    kept_per_job = True  # a job's own object, hand-edited, is kept when the job goes
    config = ""  # the [defaults] lines that send jobs here

    def __init__(self, tmp: Path, bin_dir: Path, mp: pytest.MonkeyPatch) -> None:
        self.tmp, self.bin, self.mp = tmp, bin_dir, mp

    @classmethod
    def make(cls, request: pytest.FixtureRequest, tmp: Path, bin_dir: Path,
             mp: pytest.MonkeyPatch) -> Driver:
        """The driver for one test (`request` gives session fixtures: a real manager)."""
        return cls(tmp, bin_dir, mp)

    def fire(self, job: str) -> int:
        """Run one firing of `job` as the scheduler would; its exit status."""
        raise NotImplementedError

    def put_foreign(self) -> None:
        """Something of the user's own, installed beside schedgen's, in the same place."""
        raise NotImplementedError

    def foreign(self) -> bytes:
        """The foreign object as it is now, byte for byte."""
        raise NotImplementedError

    def installed(self, job: str) -> bytes | None:
        """The scheduler's object schedgen made for `job` (None: there is none)."""
        raise NotImplementedError

    def edit(self, job: str) -> None:
        """Change schedgen's object for `job` the way a user would by hand."""
        raise NotImplementedError

    def put_in_place(self, job: str) -> bool:
        """The user's own object where schedgen's for `job` would go (False: no such place)."""
        raise NotImplementedError

    def check(self, files: list[Path]) -> None:
        """What the scheduler itself would say of rendered or applied files (its parser)."""

    def close(self) -> None:
        pass


class LaunchdDriver(Driver):
    name = "launchd"
    config = 'targets = ["launchd"]\nlabel_prefix = "local.conform"\n'

    def __init__(self, tmp: Path, bin_dir: Path, mp: pytest.MonkeyPatch) -> None:
        super().__init__(tmp, bin_dir, mp)
        self.fake = FakeLaunchctl(bin_dir, tmp)
        for k, v in self.fake.env.items():
            mp.setenv(k, v)
        mp.setattr("schedgen.targets.launchd.launchctl.RETRY_DELAYS", (0.01, 0.01, 0.01))
        self.agents = Path(os.environ["HOME"]) / "Library" / "LaunchAgents"

    def _plist(self, job: str) -> Path:
        return self.agents / f"local.conform.{job}.plist"

    def fire(self, job: str) -> int:
        # launchd runs ProgramArguments with EnvironmentVariables added to its own.
        doc = plistlib.loads(self._plist(job).read_bytes())
        assert f"local.conform.{job}" in self.fake.loaded(), "the agent is not loaded"
        env = _run_env(doc.get("EnvironmentVariables"))
        return subprocess.run(doc["ProgramArguments"], env=env, timeout=60,
                              stdin=subprocess.DEVNULL, capture_output=True).returncode

    def put_foreign(self) -> None:
        self.agents.mkdir(parents=True, exist_ok=True)
        (self.agents / "com.example.mine.plist").write_bytes(plistlib.dumps(
            {"Label": "com.example.mine", "ProgramArguments": ["/usr/bin/true"],
             "StartInterval": 3600}))
        self.fake.set_loaded("com.example.mine", str(self.agents / "com.example.mine.plist"))

    def foreign(self) -> bytes:
        mine = self.agents / "com.example.mine.plist"
        assert "com.example.mine" in self.fake.loaded(), "the user's agent was unloaded"
        return mine.read_bytes()

    def installed(self, job: str) -> bytes | None:
        p = self._plist(job)
        return p.read_bytes() if p.exists() else None

    def edit(self, job: str) -> None:
        p = self._plist(job)
        p.write_bytes(p.read_bytes().replace(b"<dict>", b"<dict>\n<key>Nice</key><integer>5</integer>", 1))

    def check(self, files: list[Path]) -> None:
        for f in files:
            if f.suffix == ".plist":
                assert plistlib.loads(f.read_bytes())["Label"].startswith("local.conform.")

    def put_in_place(self, job: str) -> bool:
        self.agents.mkdir(parents=True, exist_ok=True)
        self._plist(job).write_bytes(plistlib.dumps(
            {"Label": f"local.conform.{job}", "ProgramArguments": ["/usr/bin/true"]}))
        return True


CRON_FOREIGN = b"# my own lines\nMAILTO=me@example.com\n17 3 * * * /usr/bin/true backup\n"


class CronDriver(Driver):
    """The real `crontab` program, on the table of a throwaway user (`crontab -u`): the
    real table of whoever runs the tests is never touched (the end-to-end test's is)."""

    name = "cron"
    config = 'targets = ["cron"]\n'
    kept_per_job = False  # the block between schedgen's markers is one artifact

    def __init__(self, tmp: Path, bin_dir: Path, mp: pytest.MonkeyPatch, user: str) -> None:
        super().__init__(tmp, bin_dir, mp)
        self.user = user
        real = "/usr/bin/crontab"
        write_executable(bin_dir / "crontab", f'#!/bin/sh\nexec {real} -u {user} "$@"\n')
        subprocess.run([real, "-u", user, "-r"], capture_output=True)

    @classmethod
    def make(cls, request: pytest.FixtureRequest, tmp: Path, bin_dir: Path,
             mp: pytest.MonkeyPatch) -> Driver:
        return cls(tmp, bin_dir, mp, request.getfixturevalue("cron_user"))

    def _table(self) -> str:
        r = subprocess.run([str(self.bin / "crontab"), "-l"], capture_output=True, text=True)
        return r.stdout if r.returncode == 0 else ""

    def _line(self, job: str) -> str | None:
        lines = [ln for ln in self._table().splitlines()
                 if ln and not ln.startswith("#") and f"{job}" in ln and "=" not in ln.split()[0]]
        return lines[0] if lines else None

    def fire(self, job: str) -> int:
        # cron hands the command (after the five fields) to /bin/sh -c, with a bare env.
        line = self._line(job)
        assert line is not None, f"no crontab line for {job}: {self._table()}"
        command = line.split(None, 5)[5]
        return subprocess.run(["/bin/sh", "-c", command], env=_run_env(), timeout=60,
                              stdin=subprocess.DEVNULL, capture_output=True).returncode

    def put_foreign(self) -> None:
        p = self.tmp / "foreign.cron"
        p.write_bytes(CRON_FOREIGN)
        subprocess.run([str(self.bin / "crontab"), str(p)], check=True)

    def foreign(self) -> bytes:
        # The user's lines, in their order, wherever schedgen's block sits among them.
        table = self._table()
        start, end = table.find("# BEGIN schedgen"), table.find("# END schedgen")
        if start != -1 and end != -1:
            table = table[:start] + table[table.index("\n", end) + 1:]
        return table.encode()

    def installed(self, job: str) -> bytes | None:
        line = self._line(job)
        return line.encode() if line else None

    def edit(self, job: str) -> None:
        table = self._table()
        line = self._line(job)
        assert line is not None
        p = self.tmp / "edited.cron"
        p.write_text(table.replace(line, line.replace(line.split()[0], "7", 1)))
        subprocess.run([str(self.bin / "crontab"), str(p)], check=True)

    def put_in_place(self, job: str) -> bool:
        return False  # the user's lines and schedgen's block never share a place

    def close(self) -> None:
        subprocess.run(["/usr/bin/crontab", "-u", self.user, "-r"], capture_output=True)


UNIT = b"[Unit]\nDescription=my own backup\n\n[Service]\nType=oneshot\nExecStart=/usr/bin/true\n"


class SystemdDriver(Driver):
    """A real systemd user manager (tests/sdmanager.py)."""

    name = "systemd"
    config = 'targets = ["systemd"]\nlabel_prefix = "local.conform"\n'

    def __init__(self, tmp: Path, bin_dir: Path, mp: pytest.MonkeyPatch,
                 manager: UserManager) -> None:
        super().__init__(tmp, bin_dir, mp)
        self.manager = manager
        manager.reset()
        for k, v in manager.env().items():
            if k != "PATH":
                mp.setenv(k, v)
        manager.install_shim(bin_dir)
        self.units = manager.home / ".config" / "systemd" / "user"

    @classmethod
    def make(cls, request: pytest.FixtureRequest, tmp: Path, bin_dir: Path,
             mp: pytest.MonkeyPatch) -> Driver:
        return cls(tmp, bin_dir, mp, request.getfixturevalue("user_manager"))

    def fire(self, job: str) -> int:
        # `systemctl start` of a oneshot service returns when the service has finished.
        r = self.manager.run("start", f"local.conform.{job}.service", check=False)
        show = self.manager.run("show", "--property=ExecMainStatus",
                                f"local.conform.{job}.service").stdout
        assert r.returncode in (0, 1), r.stderr
        return int(show.strip().partition("=")[2] or "0")

    def put_foreign(self) -> None:
        self.units.mkdir(parents=True, exist_ok=True)
        (self.units / "mine.service").write_bytes(UNIT)
        (self.units / "mine.timer").write_bytes(
            b"[Timer]\nOnCalendar=*-*-* 03:17:00\n\n[Install]\nWantedBy=timers.target\n")
        self.manager.run("daemon-reload")
        self.manager.run("enable", "--now", "mine.timer")

    def foreign(self) -> bytes:
        active = self.manager.run("is-active", "mine.timer", check=False).stdout.strip()
        assert active == "active", f"the user's own timer is {active}"
        return (self.units / "mine.service").read_bytes() + (self.units / "mine.timer").read_bytes()

    def installed(self, job: str) -> bytes | None:
        p = self.units / f"local.conform.{job}.service"
        return p.read_bytes() if p.exists() else None

    def edit(self, job: str) -> None:
        p = self.units / f"local.conform.{job}.service"
        p.write_bytes(p.read_bytes() + b"Nice=5\n")

    def put_in_place(self, job: str) -> bool:
        self.units.mkdir(parents=True, exist_ok=True)
        (self.units / f"local.conform.{job}.service").write_bytes(UNIT)
        return True


class KubernetesDriver(Driver):
    """kubernetes-validate checks what render makes; the fake kubectl is the cluster."""

    name = "kubernetes"
    runs_wrapper = False
    shared = True
    config = ('targets = ["kubernetes"]\n[defaults.kubernetes]\n'
              'image = "ghcr.io/example/conform:1"\nnamespace = "jobs"\n')

    def __init__(self, tmp: Path, bin_dir: Path, mp: pytest.MonkeyPatch) -> None:
        super().__init__(tmp, bin_dir, mp)
        self.fake = FakeKubectl(bin_dir, tmp)
        for k, v in self.fake.env.items():
            mp.setenv(k, v)

    def put_foreign(self) -> None:
        self.fake.put_foreign("jobs", "mine")

    def foreign(self) -> bytes:
        # The whole object as the API server returns it: managedFields and
        # resourceVersion change at any write to it, whoever makes it.
        obj = self.fake.cronjobs().get("mine")
        assert obj is not None, "the user's own CronJob was deleted"
        return json.dumps(obj, sort_keys=True).encode()

    def installed(self, job: str) -> bytes | None:
        obj = self.fake.cronjobs().get(job)
        return None if obj is None else json.dumps(obj, sort_keys=True).encode()

    def edit(self, job: str) -> None:
        self.fake.edit("jobs", job, ["spec", "suspend"], True)

    def put_in_place(self, job: str) -> bool:
        self.fake.put_foreign("jobs", job)
        return True

    def check(self, files: list[Path]) -> None:
        import kubernetes_validate
        import yaml

        manifests = [f for f in files if f.suffix == ".yaml"]
        assert manifests
        for f in manifests:
            doc = yaml.safe_load(f.read_text())
            assert kubernetes_validate.validate(doc, "1.32.0", strict=True) == "1.32", f


def drivers() -> dict[str, type[Driver]]:
    """Every driver, by its target's name (a subclass of Driver is one)."""
    return {cls.name: cls for cls in Driver.__subclasses__()}
