"""CronJob manifests: valid for Kubernetes (kubernetes-validate, strict), mapped field by field,
and firing on the same minutes as the job does on cron (robfig/cron's rules vs cronsim)."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import kubernetes_validate
import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from schedgen.config.load import loads
from schedgen.render.artifacts import MARKER
from schedgen.render.desired import desired
from schedgen.schedule.expressions import MACROS, parse_cron, parse_entry
from schedgen.schedule.kubernetes import kube_schedule
from schedgen.targets.kubernetes import render as kube
from tests.helpers import schedgen, write_config
from tests.oracles import END, START, cronsim_minutes, robfig_minutes

K8S = "1.32.0"  # the Kubernetes version manifests are checked against (timeZone is GA since 1.27)

CONFIG = """
[defaults]
namespace = "example"
targets = ["kubernetes", "cron"]
[defaults.kubernetes]
image = "ghcr.io/example/naly:1.4"
namespace = "jobs"

[jobs.publish]
description = "Publish the daily forecast notes: 100% \\"done\\""
command = ["pnpm", "tsx", "publish.ts", "--run-id", "{run_id}", "--job={job}", "$(HOME)", "a$$b"]
schedule = "15 6 * * *"
env = { NODE_ENV = "production", NO = "no", PRICE = "$5", EMPTY = "" }
timeout = "45m"
[jobs.publish.logs]
keep_runs = 7
[jobs.publish.kubernetes]
env_secret = "naly-env"
service_account = "publisher"
working_dir = "/app"
resources = { requests = { cpu = "250m", memory = "256Mi" }, limits = { memory = "1Gi", "example.com/gpu" = 1 } }

[jobs.shell]
command = "cd /srv && ./run.sh \\"$SCHEDGEN_JOB\\""
schedule = "@every 15m"
lock = false
enabled = false
targets = ["kubernetes"]

[jobs.sunday]
command = ["/bin/true"]
schedule = "0 4 * * 7"
targets = ["kubernetes"]
"""


@pytest.fixture
def config(tmp_path: Path):  # noqa: ANN201
    return loads(CONFIG, tmp_path / "jobs.toml")


def manifests(config: Any) -> dict[str, str]:
    return {a.job: a.content for a in desired(config, ("kubernetes",)) if a.kind == "cronjob"}


def docs(config: Any) -> dict[str, dict[str, Any]]:
    return {job: yaml.safe_load(text) for job, text in manifests(config).items()}


def pod(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]


def test_every_manifest_is_a_valid_cronjob_for_the_pinned_kubernetes(config: Any) -> None:
    found = docs(config)
    assert set(found) == {"publish", "shell", "sunday"}
    for doc in found.values():
        assert kubernetes_validate.validate(doc, K8S, strict=True) == "1.32"


def test_the_validator_is_strict_enough_to_catch_a_wrong_field(config: Any) -> None:
    doc = docs(config)["publish"]
    doc["spec"]["jobTemplate"]["spec"]["backofLimit"] = 0  # a typo
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(doc, K8S, strict=True)
    doc = docs(config)["publish"]
    doc["spec"]["suspend"] = "false"  # a string where a boolean goes
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(doc, K8S, strict=True)


def test_the_mapping_field_by_field(config: Any) -> None:
    doc = docs(config)["publish"]
    own = {"app.kubernetes.io/managed-by": "schedgen", "schedgen/namespace": "example",
           "schedgen/job": "publish"}
    assert doc["apiVersion"] == "batch/v1" and doc["kind"] == "CronJob"
    assert doc["metadata"] == {"name": "publish", "namespace": "jobs", "labels": own,
                               "annotations": {"schedgen/description":
                                               'Publish the daily forecast notes: 100% "done"'}}
    spec = doc["spec"]
    assert spec["schedule"] == "15 6 * * *"
    assert "timeZone" not in spec  # no zone in the job: the cluster's (kube-controller-manager's)
    assert spec["concurrencyPolicy"] == "Forbid"  # the job has a lock
    assert spec["suspend"] is False
    assert spec["successfulJobsHistoryLimit"] == spec["failedJobsHistoryLimit"] == 7
    assert spec["jobTemplate"]["metadata"]["labels"] == own
    job_spec = spec["jobTemplate"]["spec"]
    assert job_spec["backoffLimit"] == 0
    assert job_spec["activeDeadlineSeconds"] == 45 * 60
    assert job_spec["template"]["metadata"]["labels"] == own
    p = pod(doc)
    assert p["restartPolicy"] == "Never"
    assert p["serviceAccountName"] == "publisher"
    (c,) = p["containers"]
    assert c["name"] == "publish" and c["image"] == "ghcr.io/example/naly:1.4"
    assert c["workingDir"] == "/app"
    assert c["command"] == ["pnpm", "tsx", "publish.ts", "--run-id", "$(SCHEDGEN_RUN_ID)",
                            "--job=$(SCHEDGEN_JOB)", "$$(HOME)", "a$$$$b"]
    assert c["env"] == [
        {"name": "SCHEDGEN_JOB", "value": "publish"},
        {"name": "SCHEDGEN_RUN_ID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "NODE_ENV", "value": "production"}, {"name": "NO", "value": "no"},
        {"name": "PRICE", "value": "$$5"}, {"name": "EMPTY", "value": ""}]
    assert c["envFrom"] == [{"secretRef": {"name": "naly-env"}}]
    assert c["resources"] == {"requests": {"cpu": "250m", "memory": "256Mi"},
                              "limits": {"memory": "1Gi", "example.com/gpu": "1"}}


def test_a_bash_string_a_step_every_and_a_disabled_job(config: Any) -> None:
    doc = docs(config)["shell"]
    assert pod(doc)["containers"][0]["command"] == [
        "bash", "-c", 'cd /srv && ./run.sh "$$SCHEDGEN_JOB"']
    assert doc["spec"]["schedule"] == "*/15 * * * *"
    assert doc["spec"]["concurrencyPolicy"] == "Allow"  # lock = false
    assert doc["spec"]["suspend"] is True  # enabled = false: kept, suspended
    assert "activeDeadlineSeconds" not in doc["spec"]["jobTemplate"]["spec"]
    assert docs(config)["sunday"]["spec"]["schedule"] == "0 4 * * 0"  # robfig has no 7


def test_the_file_says_what_wrote_it(config: Any) -> None:
    text = manifests(config)["publish"]
    lines = text.splitlines()
    assert lines[0].startswith("# Generated by schedgen from ") and MARKER in lines[0]
    assert lines[2] == "# 15 6 * * *: At 06:15 every day"
    assert "0.1.0" not in text  # no version: an upgrade that changes nothing changes no file


def _expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' $(VAR) expansion of command and env values (its expansion package)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                close = text.find(")", i + 2)
                if close != -1:
                    name = text[i + 2:close]
                    out.append(env.get(name, f"$({name})"))
                    i = close + 1
                    continue
            out.append("$" + nxt)
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


@given(st.text(alphabet=st.sampled_from("$()ab{}_ HOME"), max_size=30))
def test_an_argument_arrives_in_the_container_as_written(arg: str) -> None:
    assume("{run_id}" not in arg and "{job}" not in arg)
    env = {"HOME": "/root", "a": "X", "SCHEDGEN_JOB": "j"}
    assert _expand(kube.k8s_arg(arg), env) == arg


def test_placeholders_become_the_runs_values() -> None:
    env = {"SCHEDGEN_RUN_ID": "publish-29001-x7k2p", "SCHEDGEN_JOB": "publish"}
    assert _expand(kube.k8s_arg("--id={run_id}/{job}"), env) == "--id=publish-29001-x7k2p/publish"


def test_a_time_zone_becomes_spec_timezone(config: Any) -> None:
    job = config.job("publish")
    doc = kube.cronjob(job, "example", zone="Europe/Kyiv")
    assert doc["spec"]["timeZone"] == "Europe/Kyiv"
    assert kubernetes_validate.validate(doc, K8S, strict=True) == "1.32"
    # The hook reads the job's `timezone` once the model has one; none yet: the cluster's.
    assert kube.job_zone(job) is None
    for zone in ("Europe/Kyiv", ZoneInfo("Europe/Kyiv")):
        assert kube.job_zone(types.SimpleNamespace(timezone=zone)) == "Europe/Kyiv"  # type: ignore[arg-type]


# -- schedules: robfig/cron (Kubernetes) against cronsim (Debian cron, what cron does) ----

EXPRESSIONS = [
    "15 6 * * *", "40 10,16 * * *", "*/15 * * * 1-5", "0 9 1 * *", "0 0 * * 7", "0 0 * * 5-7",
    "30 2 1-7 * 1", "0 0 1,15 * 5", "0 12 */2 * *", "0 12 * * */2", "0 0 1-31 * 1",
    "0 0 */2 * 0-6", "5 4 * * sun", "0 0 29 feb *", "0 6 * jan-mar mon-fri", "0 0 * * 1-7/2",
    "@daily", "@weekly", "@monthly", "@yearly", "@hourly",
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_the_cronjob_fires_on_the_minutes_cron_does(expr: str) -> None:
    entry = parse_entry(expr)
    schedule = kube_schedule(entry)
    assert len(schedule.split()) == 5
    cron_expr = MACROS.get(expr, expr)
    assert robfig_minutes(schedule) == cronsim_minutes([cron_expr], START, END)


def test_a_schedule_robfig_reads_as_cron_does_is_kept_as_written() -> None:
    for expr in ("15 6 * * *", "*/15 * * * 1-5", "0 6 * jan-mar mon-fri", "30 2 1-7 * 1"):
        assert kube_schedule(parse_entry(expr)) == expr
    assert kube_schedule(parse_entry("@weekly")) == "0 0 * * 0"


def test_every_that_is_a_cron_step_maps_and_the_rest_is_refused() -> None:
    assert kube_schedule(parse_entry("@every 2h")) == "0 */2 * * *"
    with pytest.raises(ValueError, match="no cron step"):
        kube_schedule(parse_entry("@every 7m"))
    with pytest.raises(ValueError, match="@reboot"):
        kube_schedule(parse_entry("@reboot"))


DOMS = ["*", "*/2", "*/10", "1", "1-15", "1,15,31", "31", "10-20/3", "1-31", "29", "*/1"]
MONTHS = ["*", "2", "1-6", "*/3", "feb,aug", "jan-mar"]
DOWS = ["*", "*/2", "0", "7", "1-5", "5-7", "sun", "mon-fri", "0-6", "1-7/2", "*/1", "6,7",
        "*/3,1"]


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 59), st.sampled_from(["3", "*/12", "1-2"]), st.sampled_from(DOMS),
       st.sampled_from(MONTHS), st.sampled_from(DOWS))
def test_any_day_rule_fires_the_same_or_is_refused(minute: int, hour: str, dom: str,
                                                    month: str, dow: str) -> None:
    expr = f"{minute} {hour} {dom} {month} {dow}"
    try:
        entry = parse_cron(expr)
    except ValueError:
        assume(False)
        return
    cron = cronsim_minutes([expr], START, END)
    try:
        schedule = kube_schedule(entry)
    except ValueError:
        # Refused only when Debian ANDs two restricted day fields, which robfig cannot.
        assert entry.day_and and not entry.days_full and not entry.weekdays_full
        return
    assert robfig_minutes(schedule) == cron, (expr, schedule)


def test_render_target_kubernetes_writes_one_file_per_job(tmp_path: Path) -> None:
    write_config(tmp_path / "jobs.toml", CONFIG)
    r = schedgen("render", "--target", "kubernetes", "--out", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    files = sorted(p.name for p in (tmp_path / "out/kubernetes").iterdir())
    assert files == ["publish.yaml", "shell.yaml", "sunday.yaml"]
    assert not (tmp_path / "out/wrappers").exists()
    write_config(tmp_path / "jobs.toml", CONFIG.replace('"kubernetes", "cron"', '"cron"')
                 .replace('targets = ["kubernetes"]', 'targets = ["cron"]'))
    # --target T renders T for every job that can go there (docs/design.md, "Targets"): these all can
    r = schedgen("render", "--target", "kubernetes", "--out", "out2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "out2/kubernetes").iterdir()) == files


def test_the_oracle_sees_where_kubernetes_and_cron_differ() -> None:
    # As written, these would fire on other days under Kubernetes: the rewrite is needed.
    for expr in ("0 0 */2 * 0-6", "30 1 */10 * 0-6"):
        assert robfig_minutes(expr) != cronsim_minutes([expr], START, END)
        schedule = kube_schedule(parse_entry(expr))
        assert schedule != expr
        assert robfig_minutes(schedule) == cronsim_minutes([expr], START, END)
    with pytest.raises(ValueError, match="out of range 0-6"):
        robfig_minutes("0 0 * * 7")  # the API server refuses it


@pytest.mark.parametrize("expr", ["30 2 * * 7", "0 3 */2 * 0-6", "15 6 * * 1-5", "@daily"])
def test_with_a_zone_the_cronjob_fires_where_cron_would(expr: str, config: Any) -> None:
    """cronsim in the job's zone (docs/design.md, "Time zones") for the cron line and for the CronJob's
    schedule in its spec.timeZone: the same instants, across both 2028 DST changes."""
    from datetime import datetime

    from cronsim import CronSim

    job = config.job("sunday")._replace(schedule=(parse_entry(expr),))
    spec = kube.cronjob(job, "example", zone="Europe/Kyiv")["spec"]
    assert kubernetes_validate.validate(kube.cronjob(job, "example", zone="Europe/Kyiv"), K8S,
                                        strict=True)

    def instants(e: str, zone: str) -> list[datetime]:
        it, out = CronSim(MACROS.get(e, e), datetime(2028, 1, 1, tzinfo=ZoneInfo(zone))), []
        for t in it:
            if t.year > 2028:
                return out
            out.append(t)
        return out

    assert instants(spec["schedule"], spec["timeZone"]) == instants(expr, "Europe/Kyiv")


def test_retries_and_on_busy_map_to_backoff_limit_and_concurrency_policy(tmp_path: Path) -> None:
    text = CONFIG.replace('timeout = "45m"', 'timeout = "45m"\nretries = 3\nlock = { on_busy = "replace" }')
    found = docs(loads(text, tmp_path / "jobs.toml"))
    doc = found["publish"]
    assert kubernetes_validate.validate(doc, K8S, strict=True) == "1.32"
    assert doc["spec"]["concurrencyPolicy"] == "Replace"
    job_spec = doc["spec"]["jobTemplate"]["spec"]
    assert job_spec["backoffLimit"] == 3
    # The timeout is each attempt's, as the wrapper's: the pod's deadline, not the Job's.
    assert pod(doc)["activeDeadlineSeconds"] == 45 * 60
    assert "activeDeadlineSeconds" not in job_spec
    assert found["sunday"]["spec"]["concurrencyPolicy"] == "Forbid"  # skip, the default
