"""JSON Schema (draft 2020-12) for jobs.toml, generated from the loader's own key lists.

The tables below give each key a type; which keys exist, where, which are required
and their defaults come from schedgen.config.defaults, the table the loader reads. A
key added there without a type here makes `schema()` raise, so the schema cannot
silently fall behind the loader.
"""

from __future__ import annotations

import json
import re
from typing import Any

from schedgen.config import defaults as cfg
from schedgen.config import kubernetes as kube_config
from schedgen.config import values as f
from schedgen.config.notify import (
    ADDRESS,
    CHANNEL_KEYS,
    MAX_AFTER,
    NOTIFY_KEYS,
    SENDMAIL,
    WEBHOOK_FORMATS,
)
from schedgen.schedule.expressions import MACROS
from schedgen.targets import registry

Schema = dict[str, Any]
DIALECT = "https://json-schema.org/draft/2020-12/schema"
TOP_KEYS = ("format", "defaults", "jobs")  # the loader's top-level table


def _anchored(pattern: re.Pattern[str]) -> str:
    """A Python fullmatch pattern as an (ECMA 262) JSON Schema pattern."""
    return f"^(?:{pattern.pattern})$"


def _doc(text: str, schema: Schema) -> Schema:
    return {"description": text, **schema}


_PATH: Schema = {"type": "string", "minLength": 1, "pattern": "^[^\\n\\x00]*\\S[^\\n\\x00]*$"}
_DURATION: Schema = {"anyOf": [
    {"type": "integer", "minimum": 0},
    {"type": "string", "pattern": "^ *(?:[0-9]+|(?:[0-9]+ *[smhd] *)+) *$"},
]}
_POSITIVE_DURATION: Schema = {"anyOf": [
    {"type": "integer", "minimum": 1},
    {"type": "string", "pattern": "^ *(?:[0-9]+|(?:[0-9]+ *[smhd] *)+) *$"},
]}
_SIZE: Schema = {"anyOf": [
    {"type": "integer", "minimum": 1},
    {"type": "string", "pattern": "^\\s*[0-9]+\\s*(?:[Bb]|[KkMmGg][Bb]|[KkMmGg][Ii][Bb])?\\s*$"},
]}
_COMMAND: Schema = {"anyOf": [
    {"type": "string", "minLength": 1, "description": "run by bash -c"},
    {"type": "array", "minItems": 1, "items": {"type": "string"},
     "description": "argv, run without a shell; placeholders {item} {run_id} {artifact_dir} {job}"},
]}
_EXPRESSION: Schema = {
    "type": "string",
    "pattern": "^\\s*(?:@[A-Za-z]+(?:\\s+.*)?|\\S+\\s+\\S+\\s+\\S+\\s+\\S+\\s+\\S+)\\s*$",
    "examples": ["15 6 * * *", "40 10,16 * * *", *MACROS, "@reboot", "@every 15m"],
}

# Every key the loader accepts in a job (or in [defaults]), with its type.
JOB_TYPES: dict[str, Schema] = {
    "description": _doc("One line, shown in crontab and plist comments",
                        {"type": "string", "pattern": "^[^\\n\\r\\x00]*$"}),
    "command": _doc("What to run: an argv list (no shell) or a string for bash -c", _COMMAND),
    "schedule": _doc("5-field cron, a macro, @reboot, '@every 15m', or a list (their union)",
                     {"anyOf": [_EXPRESSION, {"type": "array", "minItems": 1, "items": _EXPRESSION}]}),
    "working_dir": _doc("Directory the command runs in", _PATH),
    "env": _doc("Environment for the command (PATH goes in `path`)", {
        "type": "object",
        "propertyNames": {"pattern": _anchored(f.ENV_NAME),
                          "not": {"anyOf": [{"const": "PATH"}, {"pattern": "^SCHEDGEN_"}]}},
        "additionalProperties": {"type": ["string", "integer", "number"]},
    }),
    "env_file": _doc("Sourced at run time with set -a; never copied into plists", _PATH),
    "timeout": _doc("Kill the command's process group after this long (exit 124)",
                    _POSITIVE_DURATION),
    "smoke": _doc("What a smoke run executes instead of the command", _COMMAND),
    "throttle_interval": _doc("launchd ThrottleInterval (seconds)", {"type": "integer", "minimum": 0}),
    "run_at_load": _doc("launchd RunAtLoad", {"type": "boolean"}),
    "enabled": _doc("false: keep the job in the file but install nothing", {"type": "boolean"}),
    "timezone": _doc("IANA zone the schedule is read in (default: the host's local time)",
                     {"type": "string", "pattern": "^[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+)*$",
                      "examples": ["Europe/Kyiv", "America/New_York", "UTC"]}),
    # One schema for both forms, so a typo inside [lock] is reported by name.
    "lock": _doc("false for no lock, or the lock's settings", {
        "type": ["boolean", "object"], "$ref": "#/$defs/lock"}),
    "queue": _doc("Claim files from a shared folder, one run per item", {"$ref": "#/$defs/queue"}),
    "logs": _doc("Log rotation and run-directory pruning", {"$ref": "#/$defs/logs"}),
    cfg.KUBERNETES: _doc("The CronJob for target kubernetes", {"$ref": "#/$defs/kubernetes"}),
    "notify": _doc("Who hears about failures, recoveries and missed firings",
                   {"$ref": "#/$defs/notify"}),
    "adopts": _doc("What `import` found this job in, still installed by hand: "
                   "'<target>: <its line or name there>'; apply turns it off, uninstall "
                   "puts it back", {"type": "string", "pattern": "^[a-z0-9_-]+: .*$",
                                    "examples": ["cron: */5 * * * * ~/bin/backup.sh"]}),
    "catch_up": _doc("After a power-off, sleep or stopped scheduler: run the latest missed "
                     "firing once ('once') or not ('none')", {"enum": ["none", "once"]}),
    "max_lateness": _doc("No start more than this after its firing (catch-ups, late "
                         "starts; Kubernetes startingDeadlineSeconds)", _POSITIVE_DURATION),
    "random_delay": _doc("Start each run up to this long after its firing", _DURATION),
    "random_delay_stable": _doc("true: one offset per job and host, the same every run; "
                                "false: a fresh one each run", {"type": "boolean"}),
    "hosts": _doc("Hosts the job is installed on: globs on the short host name (up to the "
                  "first dot, any case); '!name' excludes, and an exclusion always wins; only "
                  "exclusions: every host but those", {
                      "type": "array", "minItems": 1, "uniqueItems": True,
                      "items": {"type": "string", "pattern": _anchored(f.HOST_PATTERN)},
                      "examples": [["mac-mini", "web-*"], ["!laptop"]]}),
}
SHARED_TYPES: dict[str, Schema] = {
    "label_prefix": _doc("launchd Label and systemd unit name = <label_prefix>.<job>",
                         {"type": "string", "pattern": _anchored(f.LABEL_PREFIX)}),
    "targets": _doc("Where the job is installed", {
        "type": "array", "minItems": 1, "items": {"enum": list(registry.names())}}),
    "path": _doc("PATH for the command, in order", {
        "type": "array", "minItems": 1, "items": {"type": "string", "pattern": "^[^:]+$"}}),
    "log_root": _doc("Logs and run directories go under <log_root>/<job>/", _PATH),
    "lock_dir": _doc("Where lock files live", _PATH),
    "wrapper_dir": _doc("Where the generated wrappers are installed", _PATH),
    "scope": _doc("user: installed for the user running schedgen; system: for the machine "
                  "(/etc/cron.d, LaunchDaemons, system units), run as `user`, applied as root",
                  {"enum": ["user", "system"]}),
    "user": _doc("The account a system-scope job runs as (required there, only there)",
                 {"type": "string", "pattern": _anchored(f.USER_NAME)}),
    "metrics_dir": _doc("Each run ends by writing schedgen_<namespace>_<job>.prom here "
                        "(Prometheus text format, for node_exporter's textfile collector)",
                        _PATH),
}
DEFAULTS_ONLY_TYPES: dict[str, Schema] = {
    "namespace": _doc("One crontab block / set of plists per namespace",
                      {"type": "string", "pattern": _anchored(f.NAMESPACE)}),
}
LOCK_TYPES: dict[str, Schema] = {
    "name": _doc("Jobs sharing a lock name never overlap (default: the job name)",
                 {"type": "string", "pattern": _anchored(f.LOCK_NAME)}),
    "wait": _doc("How long to wait for the lock; 0 = give up at once", _DURATION),
    "busy_exit": _doc("Exit status when the lock is busy",
                      {"type": "integer", "minimum": 0, "maximum": 255}),
}
QUEUE_TYPES: dict[str, Schema] = {
    "inbox": _doc("Folder items are claimed from", _PATH),
    "processing": _doc("Claimed items (default: sibling of inbox)", _PATH),
    "processed": _doc("Items whose run succeeded (default: sibling of inbox)", _PATH),
    "failed": _doc("Items that failed max_attempts times (default: sibling of inbox)", _PATH),
    "pattern": _doc("File-name glob, no '/'", {"type": "string", "pattern": "^[^/.][^/]*$"}),
    "batch": _doc("Items claimed per run; 0 = until the inbox is empty",
                  {"type": "integer", "minimum": 0}),
    "stale_after": _doc("A claim whose worker is gone goes back after this long",
                        _POSITIVE_DURATION),
    "max_attempts": _doc("Failed attempts before an item goes to failed/",
                         {"type": "integer", "minimum": 1}),
}
_QUANTITIES: Schema = {
    "type": "object",
    "propertyNames": {"pattern": _anchored(kube_config.RESOURCE_NAME)},
    "additionalProperties": {"anyOf": [{"type": "number", "minimum": 0},
                                       {"type": "string", "pattern": _anchored(kube_config.QUANTITY)}]},
}
KUBERNETES_TYPES: dict[str, Schema] = {
    "image": _doc("Container image the job runs in (required for target kubernetes)",
                  {"type": "string", "pattern": _anchored(kube_config.IMAGE)}),
    "namespace": _doc("Kubernetes namespace of the CronJob (default: default)",
                      {"type": "string", "pattern": _anchored(kube_config.DNS_LABEL)}),
    "env_secret": _doc("Secret whose keys become the container's environment (env_file's "
                       "counterpart)", {"type": "string", "pattern": _anchored(kube_config.DNS_SUBDOMAIN)}),
    "service_account": _doc("serviceAccountName of the job's pods",
                            {"type": "string", "pattern": _anchored(kube_config.DNS_SUBDOMAIN)}),
    "resources": _doc("Container resources: requests and limits", {
        "type": "object", "properties": {"requests": _QUANTITIES, "limits": _QUANTITIES},
        "additionalProperties": False}),
    "working_dir": _doc("Working directory inside the image (the job's working_dir is local)",
                        {"type": "string", "pattern": "^/"}),
}
LOGS_TYPES: dict[str, Schema] = {
    "max_size": _doc("Rotate the job's log at this size", _SIZE),
    "keep": _doc("Rotated logs kept", {"type": "integer", "minimum": 0}),
    "keep_runs": _doc("Run directories kept", {"type": "integer", "minimum": 1}),
}

_URL_PATTERN = "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s\"'\\\\<>`]+$"
NOTIFY_TYPES: dict[str, Schema] = {
    "on": _doc("Events the command, mail and webhook are for (default: failure, recovery)", {
        "type": "array", "items": {"enum": ["failure", "recovery", "missed"]}}),
    "command": _doc("Run on those events with the run's SCHEDGEN_* values in its environment",
                    _COMMAND),
    "mail": _doc("Address(es) mailed on those events through the local sendmail", {
        "oneOf": [{"type": "string", "pattern": f"^{ADDRESS}$"},
                  {"type": "array", "minItems": 1,
                   "items": {"type": "string", "pattern": f"^{ADDRESS}$"}}],
        "examples": ["ops@example.com", ["ops@example.com", "oncall@example.com"]]}),
    "webhook": _doc("URL the event's JSON payload is POSTed to (a secret: masked in diffs)",
                    {"type": "string", "pattern": _URL_PATTERN}),
    "webhook_format": _doc("Body shape for the webhook (default json: the payload itself)",
                           {"enum": list(WEBHOOK_FORMATS)}),
    "after": _doc("Failure alerts only from the Nth failed run in a row on (default 1)",
                  {"type": "integer", "minimum": 1, "maximum": MAX_AFTER}),
    "sendmail": _doc("The sendmail program (default: sendmail on the job's PATH, then "
                     "/usr/sbin/sendmail, /usr/lib/sendmail)",
                     {"type": "string", "pattern": f"^{SENDMAIL}$"}),
    "ping_url": _doc("Heartbeat: URL/start, URL on success, URL/<exit code> on failure",
                     {"type": "string", "pattern": _URL_PATTERN}),
}


def _table(keys: tuple[str, ...], types: dict[str, Schema], where: str,
           defaults: dict[str, cfg.Default] | None = None) -> Schema:
    missing = [k for k in keys if k not in types]
    if missing:
        raise KeyError(f"schema: no type for {where} key(s) {missing}; add them to "
                       "schedgen/config/schema.py")
    given = defaults or {}
    props = {k: {**types[k], "default": given[k].value} if k in given and cfg.static(given[k])
             else types[k] for k in keys}
    return {"type": "object", "properties": props, "additionalProperties": False}


def _required_unless_defaulted(keys: tuple[str, ...], inner: str | None = None) -> list[Schema]:
    """Each job needs ``keys`` unless [defaults] gives them (in sub-table ``inner``)."""
    out = []
    job_name = _anchored(f.JOB_NAME)
    for key in keys:
        given: Schema = {"required": [key]}
        need: Schema = {"required": [key]}
        if inner:
            given = {"properties": {inner: given}, "required": [inner]}
            need = {"properties": {inner: {"anyOf": [{"not": {"type": "object"}}, need]}}}
        out.append({
            "if": {"properties": {"defaults": given}, "required": ["defaults"]},
            "else": {"properties": {"jobs": {"patternProperties": {job_name: need}}}},
        })
    return out


def schema() -> Schema:
    job_keys = (*cfg.SHARED_KEYS, *cfg.JOB_KEYS)
    types = {**SHARED_TYPES, **JOB_TYPES, **DEFAULTS_ONLY_TYPES}
    job = _table(job_keys, types, "job", {**cfg.SHARED, **cfg.JOB})
    defaults = _table(("namespace", *job_keys), types, "[defaults]", cfg.TABLES[""])
    top_types = {
        "format": _doc(f"jobs.toml format; this schedgen reads {cfg.FORMAT}", {"const": cfg.FORMAT}),
        "defaults": _doc("Any job key, given once for every job", defaults),
        "jobs": _doc("One table per job: [jobs.<name>]", {
            "type": "object", "minProperties": 1,
            "patternProperties": {_anchored(f.JOB_NAME): job},
            "additionalProperties": False,
        }),
    }
    return {
        "$schema": DIALECT,
        "title": f"schedgen jobs.toml (format {cfg.FORMAT})",
        "description": "Generated by `schedgen schema` from the config loader; do not edit.",
        **_table(TOP_KEYS, top_types, "top-level"),
        "required": ["jobs"],
        "allOf": [*_required_unless_defaulted(cfg.REQUIRED_KEYS),
                  *_required_unless_defaulted(("inbox",), inner="queue")],
        "$defs": {
            "lock": {k: v for k, v in _table(cfg.LOCK_KEYS, LOCK_TYPES, "[lock]", cfg.LOCK).items()
                     if k != "type"},  # the job key says: boolean or table
            "queue": _table(cfg.QUEUE_KEYS, QUEUE_TYPES, "[queue]", cfg.QUEUE),
            "logs": _table(cfg.LOGS_KEYS, LOGS_TYPES, "[logs]", cfg.LOGS),
            cfg.KUBERNETES: _table(kube_config.KEYS, KUBERNETES_TYPES, "[kubernetes]"),
            "notify": {**_table(NOTIFY_KEYS, NOTIFY_TYPES, "[notify]"),
                       "anyOf": [{"required": [k]} for k in (*CHANNEL_KEYS, "ping_url")]},
        },
    }


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"
