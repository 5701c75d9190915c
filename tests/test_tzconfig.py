"""`timezone` in jobs.toml: checked against the zone database, inherited from [defaults],
refused where it cannot mean anything; a zoned job's rendered files; jobs without it
render byte for byte as before."""

from __future__ import annotations

import plistlib
import shutil
import subprocess
from pathlib import Path

import pytest

from schedgen.config.load import loads
from schedgen.config.timezone import job_zone
from schedgen.errors import ConfigError
from schedgen.render.artifacts import wrapper
from schedgen.targets.cron.render import cron_block
from schedgen.targets.launchd.render import plist
from tests.helpers import schedgen, write_config

BASE = '[jobs.a]\ncommand = ["x"]\nschedule = "30 2 * * *"\n'


def problems(text: str, tmp_path: Path) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as exc:
        loads(text, tmp_path / "jobs.toml")
    return [(p.where, p.message) for p in exc.value.problems]


@pytest.mark.parametrize(("value", "hint"), [
    ('"Europe/Kyv"', "did you mean 'Europe/Kyiv'?"),
    ('"america/new_york"', "did you mean 'America/New_York'?"),
    ('"New_York"', "did you mean 'America/New_York'?"),
    ('"Mars/Olympus"', 'names look like "Europe/Kyiv"'),
    ('"../../etc/passwd"', "is not a zone"),
    ('"localtime"', "is not a zone"),
    ("3", "expected an IANA zone name"),
])
def test_bad_zone_names_job_and_field_with_a_suggestion(tmp_path: Path, value: str,
                                                        hint: str) -> None:
    [(where, message)] = problems(BASE + f"timezone = {value}\n", tmp_path)
    assert where == "jobs.a.timezone" and hint in message


def test_zone_from_defaults_and_overridden_per_job(tmp_path: Path) -> None:
    text = ('[defaults]\ntimezone = "Europe/Kyiv"\n' + BASE
            + '[jobs.b]\ncommand = ["x"]\nschedule = "@daily"\ntimezone = "UTC"\n')
    a, b = loads(text, tmp_path / "jobs.toml").jobs
    assert (a.timezone, b.timezone) == ("Europe/Kyiv", "UTC")
    assert str(job_zone(a)) == "Europe/Kyiv"


def test_no_zone_is_none(tmp_path: Path) -> None:
    job = loads(BASE, tmp_path / "jobs.toml").jobs[0]
    assert job.timezone is None and job_zone(job) is None


@pytest.mark.parametrize(("extra", "fragment"), [
    ('schedule = "@every 15m"\n', "@every counts elapsed time"),
    ('schedule = ["@reboot", "0 1 * * *"]\n', "@reboot runs at boot"),
    ('schedule = "0 1 * * *"\ntargets = ["launchd"]\nrun_at_load = true\n', "run_at_load"),
])
def test_zone_refused_where_it_means_nothing(tmp_path: Path, extra: str, fragment: str) -> None:
    text = f'[jobs.a]\ncommand = ["x"]\ntimezone = "Europe/Kyiv"\n{extra}'
    found = problems(text, tmp_path)
    assert any(w == "jobs.a.timezone" and fragment in m for w, m in found), found


def test_validate_cli_exit_2_names_the_field(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", BASE + 'timezone = "Europe/Kiyv"\n')
    r = schedgen("validate", "-c", str(cfg))
    assert r.returncode == 2
    assert "jobs.a.timezone" in r.stderr + r.stdout and "Europe/Kyiv" in r.stderr + r.stdout
    assert "Traceback" not in r.stderr


# -- rendering ------------------------------------------------------------------------

def _config(tmp_path: Path, zone: str | None, targets: str = '["cron", "launchd"]'):
    tz = f'timezone = "{zone}"\n' if zone else ""
    text = (f'[jobs.a]\ncommand = ["/bin/true"]\nschedule = "30 2 * * *"\ntargets = {targets}\n'
            f'wrapper_dir = "{tmp_path}/w"\nlock_dir = "{tmp_path}/l"\n{tz}')
    return loads(text, tmp_path / "jobs.toml")


def test_zoned_job_renders_widened_lines_dicts_and_a_gated_wrapper(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    config = _config(tmp_path, "America/New_York")
    job = config.jobs[0]
    block = cron_block(config, config.jobs)
    assert f"30 7,8 * * * {tmp_path}/w/a.sh --cron" in block
    assert f"0 8 8-14 3 * {tmp_path}/w/a.sh --cron" in block
    dicts = plistlib.loads(plist(job, config).encode())["StartCalendarInterval"]
    assert {"Hour": 7, "Minute": 30} in dicts and {"Hour": 8, "Minute": 30} in dicts
    text = wrapper(job, config)
    settings = text[text.index("# start settings"):text.index("# end settings")]
    assert "sg_tz_zone=America/New_York" in settings
    assert "sg_tz_gate" not in text  # the gate is the runtime's; the job file has settings
    if shutil.which("shellcheck"):
        path = tmp_path / "a.sh"
        path.write_text(text)
        r = subprocess.run(["shellcheck", "-S", "warning", str(path)], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stdout


def test_the_gate_runs_before_anything_that_writes(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """As the runtime is read: a statement right after the cut (which a zoned job reads
    past), so before the job file calls sg_main (cron's log redirection, the env file,
    the lock); tests/test_tzgate.py runs it: nothing written."""
    from schedgen.render.artifacts import runtime_text

    text = runtime_text()
    gate = text.index('\n[ -z "${sg_tz_zone-}" ] || [ "${sg_api:-none}" != "${sg_runtime_api-}" ] ||'
                      ' sg_tz_main\n')
    assert text.index("# --- 80-cut.bash ---") < gate < text.index("# --- 82-timeout.bash ---")
    monkeypatch.setenv("TZ", "Europe/Berlin")
    config = _config(tmp_path, "America/New_York")
    job_file = wrapper(config.jobs[0], config)
    assert job_file.index("sg_tz_zone=") < job_file.index(". \"$sg_here/") < job_file.index('sg_main "$@"')


def test_a_zoned_job_file_is_as_short_as_a_plain_one(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings only: the gate's lines are the zone's settings, not the gate's code."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    plain = wrapper(_config(tmp_path, None).jobs[0], _config(tmp_path, None))
    zoned_config = _config(tmp_path, "America/New_York")
    zoned = wrapper(zoned_config.jobs[0], zoned_config)
    # Three lines of settings more (tzgate.settings); 186 lines when the gate was pasted in.
    assert zoned.count("\nsg_tz_") == 3
    assert len(zoned.splitlines()) == len(plain.splitlines()) + 3 <= 80


def test_jobs_without_a_zone_render_as_before(tmp_path: Path) -> None:
    config = _config(tmp_path, None)
    job = config.jobs[0]
    assert "sg_tz" not in wrapper(job, config)
    assert "30 2 * * * " in cron_block(config, config.jobs)
    assert plistlib.loads(plist(job, config).encode())["StartCalendarInterval"] == [
        {"Hour": 2, "Minute": 30}]
