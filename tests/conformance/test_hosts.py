"""One jobs.toml for three machines (`hosts`), against every registered target.

The host name is given through SCHEDGEN_HOST, the one seam config/select.py reads: an
apply under each name installs exactly that host's jobs and removes (owned ones only)
what moved away; `diff --host` shows each host's jobs without applying anything; the
user's own objects are never touched.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance.drivers import Driver
from tests.conformance.test_conformance import applied, cli, config, job

JOBS = {"nightly", "web-logs", "everywhere", "not-web-3"}
FLEET = (job("nightly", more='hosts = ["mac-mini"]')
         + job("web-logs", more='hosts = ["web-*", "!web-3"]')
         + job("everywhere")
         + job("not-web-3", more='hosts = ["!WEB-3"]'))  # exclusions only: all but
EXPECTED = {"mac-mini": {"nightly", "everywhere", "not-web-3"},
            "web-1": {"web-logs", "everywhere", "not-web-3"},
            "web-3": {"everywhere"}}


def _on(driver: Driver) -> set[str]:
    return {j for j in JOBS if driver.installed(j) is not None}


def test_diff_for_each_host_shows_exactly_its_jobs(driver: Driver, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEDGEN_HOST", "laptop")
    config(driver, tmp_path, FLEET)
    for host, wanted in EXPECTED.items():
        r = cli(tmp_path, "diff", "--host", host, "--json")
        assert r.returncode == 1, r.stdout + r.stderr
        doc = json.loads(r.stdout)
        assert doc["host"]["name"] == host and doc["host"]["this_machine"] is False
        assert set(doc["host"]["jobs"]) == wanted
        assert {s["job"] for s in doc["host"]["skipped"]} == JOBS - wanted
        assert all(s["field"] == "hosts" and host in s["why"] for s in doc["host"]["skipped"])
        assert {j["job"] for j in doc["jobs"]} == wanted, doc["jobs"]
        named = {c["job"] for c in doc["changes"] if c["job"]}
        named |= {x for c in doc["changes"] for x in c.get("jobs") or ()}
        assert named <= wanted, named - wanted
        text = cli(tmp_path, "diff", "--host", host).stdout
        for gone in JOBS - wanted:
            assert f"skipped {gone}: hosts = [" in text, text
    assert _on(driver) == set(), "diff installed something"
    r = cli(tmp_path, "diff", "--json")  # this machine ("laptop"): only the unrestricted
    assert set(json.loads(r.stdout)["host"]["jobs"]) == {"everywhere", "not-web-3"}


def test_apply_under_each_host_name_installs_its_jobs_and_removes_what_moved_away(
        driver: Driver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    driver.put_foreign()
    foreign = driver.foreign()
    config(driver, tmp_path, FLEET)
    for host in ("mac-mini", "web-1", "web-3", "Mac-Mini.example.com"):
        monkeypatch.setenv("SCHEDGEN_HOST", host)
        r = applied(tmp_path)
        assert _on(driver) == EXPECTED[host.split(".")[0].lower()], (host, r.stdout)
        assert driver.foreign() == foreign, f"apply as {host} changed the user's own object"
        again = cli(tmp_path, "diff")
        assert again.returncode == 0, again.stdout  # in sync as that host
    # The config moves a job to another host: this one removes it on a plain apply.
    monkeypatch.setenv("SCHEDGEN_HOST", "mac-mini")
    config(driver, tmp_path, FLEET.replace('hosts = ["mac-mini"]', 'hosts = ["web-1"]'))
    plan = cli(tmp_path, "diff")
    assert "nightly: removed (not for this host: hosts = [\"web-1\"] does not match host " \
           "mac-mini)" in plan.stdout, plan.stdout
    r = applied(tmp_path)
    assert _on(driver) == {"everywhere", "not-web-3"}, r.stdout
    assert driver.foreign() == foreign
    r = cli(tmp_path, "uninstall")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _on(driver) == set() and driver.foreign() == foreign
