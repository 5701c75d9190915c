"""jobs.toml for target kubernetes: what cannot map to a CronJob is refused, with job and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedgen.config.load import loads
from schedgen.errors import ConfigError
from tests.helpers import schedgen, write_config

HEAD = '[defaults]\ntargets = ["kubernetes"]\n[defaults.kubernetes]\nimage = "busybox:1.36"\n'
JOB = '[jobs.a]\ncommand = ["x"]\nschedule = "@daily"\n'

# (toml text, [(where, fragment of message)])
BAD = {
    "queue": (HEAD + JOB + '[jobs.a.queue]\ninbox = "/q/in"\n',
              [("jobs.a.queue", "a CronJob's pods share no folder")]),
    "reboot": (HEAD + JOB.replace("@daily", "@reboot"),
               [("jobs.a.schedule", "target kubernetes: @reboot has no meaning")]),
    "every_not_a_step": (HEAD + JOB.replace("@daily", "@every 7m"),
                         [("jobs.a.schedule", "'@every 7m' is no cron step expression")]),
    "shared_lock": (HEAD + JOB + '[jobs.a.lock]\nname = "db"\n'
                    '[jobs.b]\ncommand = ["y"]\nschedule = "@hourly"\ntargets = ["cron"]\n'
                    '[jobs.b.lock]\nname = "db"\n',
                    [("jobs.a.lock.name", "lock 'db' is shared with b")]),
    "env_file": (HEAD + JOB + 'env_file = "/srv/.env"\n',
                 [("jobs.a.env_file", "name it in kubernetes.env_secret")]),
    "lock_wait": (HEAD + JOB + '[jobs.a.lock]\nwait = "5m"\n',
                  [("jobs.a.lock.wait", "cannot wait")]),
    "artifact_dir": (HEAD + JOB.replace('["x"]', '["x", "{artifact_dir}"]'),
                     [("jobs.a.command", "{artifact_dir} is a run directory")]),
    "and_of_two_day_fields": (HEAD + JOB.replace("@daily", "0 0 */2 * 1"),
                              [("jobs.a.schedule", "no CronJob schedule fires on exactly")]),
    "two_expressions": (HEAD + JOB.replace('"@daily"', '["@daily", "@weekly"]'),
                        [("jobs.a.schedule", "a CronJob has one schedule")]),
    "no_table": ('[jobs.a]\ntargets = ["kubernetes"]\ncommand = ["x"]\nschedule = "@daily"\n',
                 [("jobs.a.kubernetes", "missing (required for target kubernetes)")]),
    "no_image": ('[jobs.a]\ntargets = ["kubernetes"]\ncommand = ["x"]\nschedule = "@daily"\n'
                 '[jobs.a.kubernetes]\nnamespace = "jobs"\n',
                 [("jobs.a.kubernetes.image", "missing (required for target kubernetes)")]),
    "underscore_name": (HEAD + JOB.replace("jobs.a", "jobs.a_b"),
                        [("jobs.a_b", "cannot name a CronJob")]),
    "long_name": (HEAD + JOB.replace("jobs.a", "jobs." + "a" * 53),
                  [("jobs." + "a" * 53, "at most 52 characters")]),
    "bad_k8s_namespace": (HEAD + JOB + '[jobs.a.kubernetes]\nnamespace = "Jobs"\n',
                          [("jobs.a.kubernetes.namespace", "not a valid Kubernetes namespace")]),
    "bad_quantity": (HEAD + JOB + '[jobs.a.kubernetes.resources]\nlimits = { memory = "1 GB" }\n',
                     [("jobs.a.kubernetes.resources.limits.memory", "not a Kubernetes quantity")]),
    "bad_resource_kind": (HEAD + JOB + '[jobs.a.kubernetes.resources]\nrequest = { cpu = 1 }\n',
                          [("jobs.a.kubernetes.resources.request", "did you mean 'requests'")]),
    "unknown_key": (HEAD + JOB + '[jobs.a.kubernetes]\nimgae = "x"\n',
                    [("jobs.a.kubernetes.imgae", "did you mean 'image'")]),
    "relative_working_dir": (HEAD + JOB + '[jobs.a.kubernetes]\nworking_dir = "app"\n',
                             [("jobs.a.kubernetes.working_dir", "absolute path inside the image")]),
    "namespace_label": ('[defaults]\nnamespace = "ends-with-dash-"\ntargets = ["kubernetes"]\n'
                        '[defaults.kubernetes]\nimage = "x:1"\n' + JOB,
                        [("defaults.namespace", "cannot be a label value")]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_what_cannot_map_is_refused_naming_job_and_field(case: str, tmp_path: Path) -> None:
    text, expected = BAD[case]
    with pytest.raises(ConfigError) as info:
        loads(text, tmp_path / "jobs.toml")
    shown = {(p.where, p.message) for p in info.value.problems}
    for where, fragment in expected:
        assert any(w == where and fragment in m for w, m in shown), (where, fragment, shown)


def test_the_same_jobs_are_fine_on_cron(tmp_path: Path) -> None:
    """Each refusal is about the target: on cron these jobs validate."""
    for case in ("queue", "reboot", "shared_lock", "env_file", "lock_wait", "artifact_dir",
                 "two_expressions", "underscore_name"):
        text = BAD[case][0].replace('targets = ["kubernetes"]', 'targets = ["cron"]')
        loads(text, tmp_path / "jobs.toml")


def test_defaults_kubernetes_merge_key_by_key(tmp_path: Path) -> None:
    cfg = loads(HEAD + 'namespace = "jobs"\n' + JOB + '[jobs.a.kubernetes]\nenv_secret = "s"\n',
                tmp_path / "jobs.toml")
    k = cfg.jobs[0].kubernetes
    assert k is not None
    assert (k.image, k.namespace, k.env_secret) == ("busybox:1.36", "jobs", "s")


def test_a_step_every_is_fine_and_a_job_not_on_kubernetes_ignores_the_table(tmp_path: Path) -> None:
    cfg = loads(HEAD + JOB.replace("@daily", "@every 15m") + '[jobs.b]\ncommand = ["y"]\n'
                'schedule = "@reboot"\ntargets = ["cron"]\n', tmp_path / "jobs.toml")
    assert [j.name for j in cfg.jobs] == ["a", "b"]


def test_validate_lists_every_kubernetes_problem_at_once(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "jobs.toml", HEAD + JOB.replace("@daily", "@reboot")
                       + 'env_file = "/x"\n[jobs.a.queue]\ninbox = "/q"\n')
    r = schedgen("validate", "-c", str(cfg))
    assert r.returncode == 2
    for where in ("jobs.a.schedule", "jobs.a.env_file", "jobs.a.queue"):
        assert f"  {where}: target kubernetes:" in r.stderr
    assert "Traceback" not in r.stderr
