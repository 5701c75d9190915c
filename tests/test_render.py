"""Rendered plists, crontab block and layout: checked by real parsers."""

from __future__ import annotations

import plistlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from schedgen.config.load import loads
from schedgen.render.artifacts import bash_word
from schedgen.render.desired import desired
from schedgen.targets.cron.render import cron_block
from schedgen.targets.launchd.render import plist
from tests.fakes import FakeCrontab, FakeLaunchctl
from tests.helpers import schedgen, schedgen_process, write_config

CONFIG = """
[defaults]
targets = ["launchd", "cron"]
log_root = "/var/tmp/sg logs"
wrapper_dir = "/opt/sg/wrappers"

[jobs.funnel]
description = "Notes & <drafts> -- 100% done"
command = ["/bin/echo", "{item}"]
schedule = "40 10,16 * * *"
working_dir = "/srv/notes"
env = { SECRET_LOOKING = "not-in-plist" }
throttle_interval = 30
[jobs.funnel.queue]
inbox = "/srv/notes/done"

[jobs.every]
command = "echo tick"
schedule = "@every 15m"

[jobs.boot]
command = ["/bin/true"]
schedule = ["@reboot", "0 9 * * 1-5"]
run_at_load = false
"""


@pytest.fixture
def config(tmp_path: Path):
    return loads(CONFIG, tmp_path / "jobs.toml")


def _plists(config) -> dict[str, str]:
    return {a.job: a.content for a in desired(config, ("launchd",)) if a.kind == "plist"}


def test_plists_parse_with_plistlib_and_carry_the_keys(config) -> None:
    p = plistlib.loads(_plists(config)["funnel"].encode())
    assert p["Label"] == "local.schedgen.funnel"
    assert p["ProgramArguments"] == ["/opt/sg/wrappers/funnel.sh"]
    assert p["EnvironmentVariables"] == {
        "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}  # Homebrew's on macOS only
    assert p["StandardOutPath"] == "/var/tmp/sg logs/funnel/launchd.out.log"
    assert p["StandardErrorPath"] == "/var/tmp/sg logs/funnel/launchd.err.log"
    assert p["WorkingDirectory"] == "/srv/notes"
    assert p["ThrottleInterval"] == 30
    assert p["RunAtLoad"] is False
    assert p["Comment"] == "Notes & <drafts> -- 100% done"
    assert p["StartCalendarInterval"] == [{"Hour": 10, "Minute": 40}, {"Hour": 16, "Minute": 40}]


def test_env_never_reaches_the_plist(config) -> None:
    assert "not-in-plist" not in _plists(config)["funnel"]


def test_every_becomes_start_interval_and_reboot_run_at_load(config) -> None:
    plists = {k: plistlib.loads(v.encode()) for k, v in _plists(config).items()}
    assert plists["every"]["StartInterval"] == 900 and "StartCalendarInterval" not in plists["every"]
    assert plists["boot"]["RunAtLoad"] is True
    assert len(plists["boot"]["StartCalendarInterval"]) == 5


@pytest.mark.parametrize("tool", ["plistutil", "xmllint"])
def test_plists_accepted_by_parsers_outside_python(config, tmp_path: Path, tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.fail(f"{tool} is not installed (.ci/run installs libplist-utils and libxml2-utils)")
    for job, text in _plists(config).items():
        f = tmp_path / f"{job}.plist"
        f.write_text(text)
        if tool == "plistutil":
            out = tmp_path / f"{job}.bin"
            r = subprocess.run(["plistutil", "-i", str(f), "-o", str(out), "-f", "bin"],
                               capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
            assert plistlib.loads(out.read_bytes())["Label"] == f"local.schedgen.{job}"
        else:
            r = subprocess.run(["xmllint", "--noout", "--nonet", str(f)], capture_output=True, text=True)
            assert r.returncode == 0, r.stderr


def test_plist_comment_survives_double_dash_in_config_path(tmp_path: Path) -> None:
    cfg = loads(CONFIG, tmp_path / "a--b" / "jobs.toml")
    text = plist(cfg.jobs[0], cfg)
    comments = re.findall(r"<!--(.*?)-->", text, re.S)
    assert any("a- -b" in c for c in comments)  # an XML comment may not hold "--"
    assert not any("--" in c for c in comments)
    assert plistlib.loads(text.encode())["Label"] == f"local.schedgen.{cfg.jobs[0].name}"


def test_cron_block_is_marked_calls_the_wrapper_and_escapes_percent(config) -> None:
    block = cron_block(config, config.for_target("cron"))
    lines = block.splitlines()
    assert lines[0].startswith("# BEGIN schedgen namespace=default")
    assert lines[-1] == "# END schedgen namespace=default"
    assert block.endswith("\n")
    jobs = [ln for ln in lines if ln and not ln.startswith("#")]
    assert jobs == [
        "40 10,16 * * * /opt/sg/wrappers/funnel.sh --cron",
        "*/15 * * * * /opt/sg/wrappers/every.sh --cron",
        "@reboot /opt/sg/wrappers/boot.sh --cron",
        "0 9 * * 1-5 /opt/sg/wrappers/boot.sh --cron",
    ]
    # No environment assignments: they would leak onto the user's own lines.
    assert not any("=" in ln.split(" ", 1)[0] for ln in jobs)
    # No unescaped % anywhere in the block (cron turns it into a newline).
    assert "100\\% done" in block
    assert "%" not in block.replace("\\%", "")


def test_cron_line_quotes_and_escapes_awkward_wrapper_paths(tmp_path: Path) -> None:
    cfg = loads('[defaults]\ntargets = ["cron"]\nwrapper_dir = "/opt/my 100% dir"\n'
                '[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\n', tmp_path / "jobs.toml")
    line = [ln for ln in cron_block(cfg, cfg.jobs).splitlines() if ln.startswith("@daily")][0]
    assert line == "@daily '/opt/my 100\\% dir/a.sh' --cron"


@pytest.mark.parametrize(("every", "expr"), [("1m", "* * * * *"), ("5m", "*/5 * * * *"),
                                             ("30m", "*/30 * * * *"), ("1h", "0 * * * *"),
                                             ("2h", "0 */2 * * *"), ("1d", "0 0 * * *")])
def test_every_renders_as_a_cron_step(tmp_path: Path, every: str, expr: str) -> None:
    cfg = loads(f'[defaults]\ntargets = ["cron"]\n[jobs.a]\ncommand = ["x"]\n'
                f'schedule = "@every {every}"\n', tmp_path / "jobs.toml")
    assert f"\n{expr} " in cron_block(cfg, cfg.jobs)


def test_bash_word_keeps_placeholders_as_single_quoted_expansions() -> None:
    assert bash_word("{item}") == '"${SCHEDGEN_ITEM}"'
    assert bash_word("--out={artifact_dir}/x y") == "--out=\"${SCHEDGEN_ARTIFACT_DIR}\"'/x y'"
    assert bash_word("it's $HOME") == "'it'\"'\"'s $HOME'"
    assert bash_word("") == "''"
    assert bash_word("{unknown}") == "'{unknown}'"


def test_disabled_jobs_are_not_rendered(tmp_path: Path) -> None:
    cfg = loads('[jobs.on]\ncommand = ["x"]\nschedule = "@daily"\n'
                '[jobs.off]\ncommand = ["x"]\nschedule = "@daily"\nenabled = false\n',
                tmp_path / "jobs.toml")
    assert {a.job for a in desired(cfg) if a.job} == {"on"}


def test_render_writes_the_documented_layout(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", CONFIG)
    out = tmp_path / "out"
    r = schedgen("render", "-c", str(cfg), "--out", str(out))
    assert r.returncode == 0, r.stderr
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == ["cron/crontab", "launchd/local.schedgen.boot.plist",
                     "launchd/local.schedgen.every.plist", "launchd/local.schedgen.funnel.plist",
                     "wrappers/boot.sh", "wrappers/every.sh", "wrappers/funnel.sh",
                     "wrappers/schedgen-runtime.default.bash"]
    assert (out / "wrappers/funnel.sh").stat().st_mode & 0o111
    for p in out.rglob("*"):
        if p.is_file():
            assert "schedgen-managed" in p.read_text()


def test_render_one_target_only(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", CONFIG)
    r = schedgen("render", "-c", str(cfg), "--out", str(tmp_path / "o"), "--target", "cron")
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "o/launchd").exists()
    assert (tmp_path / "o/cron/crontab").exists()


def test_bundled_jobs_toml_renders(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    r = schedgen("render", "-c", str(root / "jobs.toml"), "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    p = plistlib.loads((tmp_path / "o/launchd/local.schedgen.codex-note-funnel.plist").read_bytes())
    assert p["StartCalendarInterval"] == [{"Hour": 10, "Minute": 40}, {"Hour": 16, "Minute": 40}]


def test_version_flag() -> None:
    r = schedgen("--version")
    assert r.returncode == 0 and r.stdout.startswith("schedgen ")


def test_unknown_target_is_exit_2(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", CONFIG)
    r = schedgen("render", "-c", str(cfg), "--out", str(tmp_path / "o"), "--target", "anacron")
    assert r.returncode == 2 and "expected one of launchd, cron, systemd, kubernetes" in r.stderr


def test_compiled_templates_are_cached_and_a_damaged_cache_is_ignored(tmp_path: Path,
                                                                      home: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", CONFIG)
    # Fresh processes: in one process the compiled templates stay in memory.
    first = schedgen_process("render", "-c", str(cfg), "--out", str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr
    cached = list((home / ".cache/schedgen").rglob("*.cache"))
    assert len(cached) == 3  # wrapper, plist and crontab templates
    for f in cached:
        f.write_bytes(b"garbage")
    again = schedgen_process("render", "-c", str(cfg), "--out", str(tmp_path / "b"))
    assert again.returncode == 0, again.stderr
    for f in (tmp_path / "a").rglob("*"):
        if f.is_file():
            assert f.read_bytes() == (tmp_path / "b" / f.relative_to(tmp_path / "a")).read_bytes()


def test_diff_reads_the_template_cache_but_never_writes_it(
        tmp_path: Path, home: Path, fake_crontab: FakeCrontab,
        fake_launchctl: FakeLaunchctl) -> None:
    cfg = write_config(tmp_path / "jobs.toml", CONFIG)
    r = schedgen_process("diff", "-c", str(cfg))
    assert r.returncode == 1, r.stderr  # it rendered everything: changes pending
    assert not (home / ".cache").exists()
