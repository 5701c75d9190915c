"""The JSON Schema follows the loader: it validates the bundled jobs.toml, rejects typos at
every level, is regenerated into the repo, and breaks loudly when config.py grows a key."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import tomli_w

from schedgen.config import defaults as cfg
from schedgen.config import schema as sch
from schedgen.config.load import loads
from schedgen.errors import ConfigError
from tests.helpers import schedgen

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "jobs.toml"
COMMITTED = REPO / "schema" / "jobs.schema.json"


def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(sch.schema())


def errors(doc: dict[str, Any]) -> list[str]:
    """Every message, including those nested under anyOf (e.g. `lock` = bool or table)."""
    out, todo = [], list(validator().iter_errors(doc))
    while todo:
        e = todo.pop()
        out.append(e.message)
        todo += e.context
    return out


def loader_accepts(doc: dict[str, Any], tmp_path: Path) -> bool:
    import tomli_w

    try:
        loads(tomli_w.dumps(doc), tmp_path / "jobs.toml")
    except ConfigError:
        return False
    return True


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    s = sch.schema()
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(s)


def test_committed_schema_file_is_the_generated_one() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == sch.schema_text(), (
        "schema/jobs.schema.json is stale: run `schedgen schema > schema/jobs.schema.json`")


def test_bundled_jobs_toml_points_at_the_schema_and_validates() -> None:
    text = BUNDLED.read_text(encoding="utf-8")
    assert text.startswith("#:schema ./schema/jobs.schema.json\n")
    assert (BUNDLED.parent / "schema" / "jobs.schema.json").exists()
    assert errors(tomllib.loads(text)) == []


@pytest.mark.parametrize(("where", "typo"), [
    ((), "job"),                                        # top level
    (("defaults",), "namesapce"),
    (("defaults",), "comand"),
    (("jobs", "publish-daily"), "scheduel"),
    (("jobs", "publish-daily"), "working-dir"),
    (("jobs", "publish-daily", "lock"), "nmae"),
    (("jobs", "publish-daily", "logs"), "keep-runs"),
    (("jobs", "codex-note-funnel", "queue"), "inbx"),
])
def test_typos_are_rejected_like_the_loader_does(tmp_path: Path, where: tuple[str, ...],
                                                  typo: str) -> None:
    doc = tomllib.loads(BUNDLED.read_text(encoding="utf-8"))
    table = doc
    for key in where:
        table = table[key]
    table[typo] = "x"
    found = errors(doc)
    assert any(f"'{typo}' was unexpected" in m for m in found), found
    assert not loader_accepts(doc, tmp_path)


@pytest.mark.parametrize("doc", [
    {"jobs": {"a": {"command": "true", "schedule": "@daily"}}},
    {"format": 1, "jobs": {"a": {"command": ["/bin/echo", "{job}"], "schedule": ["@reboot", "0 3 * * 1-5"]}}},
    {"defaults": {"command": "true", "targets": ["cron"]}, "jobs": {"a": {"schedule": "@every 15m"}}},
    {"defaults": {"queue": {"inbox": "/tmp/in"}}, "jobs": {"a": {"command": ["x", "{item}"], "schedule": "@daily", "queue": {"batch": 0}}}},
    {"jobs": {"a": {"command": "true", "schedule": "@daily", "lock": False, "env": {"A": "1", "N": 3}}}},
    {"jobs": {"a": {"command": "true", "schedule": "@daily", "timeout": "1h30m", "logs": {"max_size": "10 MiB", "keep": 0}}}},
])
def test_schema_accepts_what_the_loader_accepts(tmp_path: Path, doc: dict[str, Any]) -> None:
    assert loader_accepts(doc, tmp_path)
    assert errors(doc) == []


@pytest.mark.parametrize("doc", [
    {"jobs": {}},
    {"jobs": {"a": {"schedule": "@daily"}}},                                 # no command
    {"jobs": {"a": {"command": "true"}}},                                    # no schedule
    {"jobs": {"Bad_Name": {"command": "true", "schedule": "@daily"}}},
    {"format": 2, "jobs": {"a": {"command": "true", "schedule": "@daily"}}},
    {"jobs": {"a": {"command": "true", "schedule": "@daily", "targets": ["anacron"]}}},
    {"jobs": {"a": {"command": "true", "schedule": "@daily", "env": {"PATH": "/bin"}}}},
    {"jobs": {"a": {"command": "true", "schedule": "@daily", "env": {"SCHEDGEN_X": "1"}}}},
    {"jobs": {"a": {"command": [], "schedule": "@daily"}}},
    {"jobs": {"a": {"command": "true", "schedule": "1 2 3"}}},
    {"jobs": {"a": {"command": "true", "schedule": "@daily", "timeout": "soon"}}},
    {"jobs": {"a": {"command": "true", "schedule": "@daily", "run_at_load": "yes"}}},
    {"jobs": {"a": {"command": "true", "schedule": "@daily", "lock": {"busy_exit": 300}}}},
    {"jobs": {"a": {"command": ["x"], "schedule": "@daily", "queue": {"batch": 1}}}},   # no inbox
    {"jobs": {"a": {"command": "true", "schedule": "@daily", "description": "two\nlines"}}},
])
def test_schema_rejects_what_the_loader_rejects(tmp_path: Path, doc: dict[str, Any]) -> None:
    assert not loader_accepts(doc, tmp_path)
    assert errors(doc), doc


def test_every_loader_key_has_a_type_and_no_type_is_stale() -> None:
    job_types = {**sch.SHARED_TYPES, **sch.JOB_TYPES}
    assert set(job_types) == {*cfg.SHARED_KEYS, *cfg.JOB_KEYS}
    assert set(sch.LOCK_TYPES) == set(cfg.LOCK_KEYS)
    assert set(sch.QUEUE_TYPES) == set(cfg.QUEUE_KEYS)
    assert set(sch.LOGS_TYPES) == set(cfg.LOGS_KEYS)


@pytest.mark.parametrize("name", ["JOB_KEYS", "SHARED_KEYS", "LOCK_KEYS", "QUEUE_KEYS",
                                  "LOGS_KEYS"])
def test_a_key_added_to_the_loader_breaks_the_schema(monkeypatch: pytest.MonkeyPatch,
                                                     name: str) -> None:
    monkeypatch.setattr(cfg, name, (*getattr(cfg, name), "brand_new_key"))
    with pytest.raises(KeyError, match="brand_new_key"):
        sch.schema()


def test_schema_command_prints_the_same_json() -> None:
    out = schedgen("schema")
    assert out.returncode == 0
    assert out.stdout == sch.schema_text()
    assert json.loads(out.stdout)["properties"]["jobs"]["additionalProperties"] is False


def test_docs_defaults_is_the_generated_table() -> None:
    assert (REPO / "docs" / "defaults.md").read_text() == cfg.docs_markdown(), (
        "docs/defaults.md is stale: regenerate it from schedgen.config.defaults.docs_markdown()")


# Computed, derived and table-valued defaults are left out: their keys are checked one by one.
STATIC = [(t, k) for t, keys in cfg.TABLES.items() for k, d in keys.items()
          if cfg.static(d) and k not in ("lock", "logs", "env", "namespace")]


@pytest.mark.parametrize("table, key", STATIC)
def test_every_static_default_is_what_the_loader_uses(tmp_path: Path, table: str,
                                                      key: str) -> None:
    """Loading a job that leaves a key out equals loading it with the documented default."""
    d = cfg.TABLES[table][key]
    job: dict[str, Any] = {"command": ["true"], "schedule": "@daily"}
    if table == "queue":
        job["queue"] = {"inbox": "/q/in"}
    given = {**job, table: {**job.get(table, {}), key: d.value}} if table else {**job, key: d.value}
    a = loads(tomli_w.dumps({"jobs": {"j": job}}), tmp_path / "jobs.toml").jobs[0]
    b = loads(tomli_w.dumps({"jobs": {"j": given}}), tmp_path / "jobs.toml").jobs[0]
    assert a == b
