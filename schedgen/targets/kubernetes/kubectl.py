"""Talking to a cluster through `kubectl`: list, server-side apply, diff, delete one by name.

Every call names the current kubectl context's cluster implicitly (schedgen keeps no
cluster settings of its own). A cluster that cannot be reached, or a missing kubectl,
is `Unreachable`: `diff` and `status` then report the cluster's state as unknown, and
`apply` stops with exit 3 naming the command.
"""

from __future__ import annotations

import json
import re
from typing import Any

from schedgen.errors import SystemOpError
from schedgen.machine.ops import Ops, Result, run

FIELD_MANAGER = "schedgen"
# Without it an unreachable server holds each call for kubectl's own (long) default.
TIMEOUT = "--request-timeout=30s"
_UNREACHABLE = re.compile(
    r"connection to the server .* was refused|Unable to connect to the server|dial tcp|"
    r"no such host|i/o timeout|context deadline exceeded|couldn't get current server API group",
    re.IGNORECASE)
_KLOG = re.compile(r"[EWI]\d{4} \d")  # kubectl's own log lines, before its message
# `kubectl diff` starts each object's part with the diff program's command line.
_DIFF_PART = re.compile(r"^diff -u -N \S+ \S+/[^/\s]+?\.CronJob\.([^.\s]+)\.(\S+)$", re.MULTILINE)


class Unreachable(SystemOpError):
    """kubectl is missing, or the cluster did not answer."""


def unknown_words(cause: str) -> str:
    """Why the cluster's state is unknown, what was and was not done, what to try."""
    fix = ("Install kubectl, or run schedgen where it is on PATH" if "not found on PATH" in cause
           else "Check the context (`kubectl config current-context`) and that the cluster "
                "answers (`kubectl get cronjobs -A`)")
    return (f"{cause}. The cluster's CronJobs could not be read, so the cluster's state is "
            f"unknown: the local copies were compared, nothing was sent to the cluster. {fix}.")


def _words(argv: list[str]) -> str:
    return " ".join(a for a in argv if a != TIMEOUT)


def _fail(argv: list[str], r: Result) -> SystemOpError:
    message = f"{_words(argv)} failed: {r.message()}"
    text = r.stderr + r.stdout
    return Unreachable(message) if _UNREACHABLE.search(text) else SystemOpError(message)


def _read(argv: list[str]) -> Result:
    try:
        return run(argv)
    except SystemOpError as exc:  # not on PATH, or no answer in time
        raise Unreachable(f"{_words(argv)}: {exc}") from None


def list_objects(resource: str, namespace: str, selector: str | None = None) -> list[dict[str, Any]]:
    argv = ["kubectl", "get", resource, "-n", namespace, "-o", "json", TIMEOUT]
    if selector:
        argv[3:3] = ["-l", selector]
    r = _read(argv)
    if not r.ok:
        raise _fail(argv, r)
    try:
        items = json.loads(r.stdout).get("items", [])
    except (ValueError, AttributeError):
        raise SystemOpError(f"{_words(argv)}: the answer is not a JSON list") from None
    return [i for i in items if isinstance(i, dict)]


def _apply_argv(verb: str, force: bool) -> list[str]:
    argv = ["kubectl", verb, "--server-side", f"--field-manager={FIELD_MANAGER}", "-f", "-", TIMEOUT]
    if force:
        argv.insert(-1, "--force-conflicts")
    return argv


def apply(ops: Ops, manifest: str, what: str, force: bool) -> None:
    """Server-side apply of one manifest; `force` takes fields other managers changed."""
    argv = _apply_argv("apply", force)
    try:
        r = ops.run(argv, input=manifest.encode())
    except SystemOpError as exc:
        raise SystemOpError(f"{_words(argv)} ({what}): {exc}") from None
    if not r.ok:
        err = _fail(argv, r)
        raise type(err)(f"{_words(argv)} ({what}) failed: {_detail(r)}")


def _detail(r: Result) -> str:
    """kubectl's error without its advice paragraph (it names flags schedgen sets itself)."""
    text = (r.stderr.strip() or r.stdout.strip())
    lines = [ln for ln in text.splitlines() if not _KLOG.match(ln)]
    kept = []
    for ln in lines or text.splitlines():
        if ln.startswith("Please review the fields above"):
            break
        kept.append(ln)
    return "\n".join(kept).strip() or f"exit status {r.returncode}"


def diff(manifests: list[str], force: bool) -> dict[str, str]:
    """`kubectl diff` of the manifests against the cluster: its output per "namespace/name"
    (under "" if it could not be split by object)."""
    argv = _apply_argv("diff", force)
    try:
        r = run(argv, input="---\n".join(manifests).encode())
    except SystemOpError as exc:
        raise Unreachable(f"{_words(argv)}: {exc}") from None
    if r.returncode == 0:
        return {}
    if r.returncode != 1:  # 1 means "differences found"; more is an error
        err = _fail(argv, r)
        raise type(err)(f"{_words(argv)} failed: {_detail(r)}")
    out: dict[str, str] = {}
    parts = list(_DIFF_PART.finditer(r.stdout))
    for i, m in enumerate(parts):
        end = parts[i + 1].start() if i + 1 < len(parts) else len(r.stdout)
        out[f"{m.group(1)}/{m.group(2)}"] = r.stdout[m.start():end]
    if not parts and r.stdout.strip():
        out[""] = r.stdout  # not split by object: shown whole
    return out


def delete(ops: Ops, namespace: str, name: str, selector: str, what: str) -> None:
    """Delete the CronJob `name` (its Jobs go with it, by owner reference), only if it
    still matches `selector`: kubectl takes no name beside a selector, so the name is a
    field selector. Nothing but that one object can match."""
    argv = ["kubectl", "delete", "cronjobs", "-n", namespace, "-l", selector,
            f"--field-selector=metadata.name={name}", TIMEOUT]
    try:
        r = ops.run(argv)
    except SystemOpError as exc:
        raise SystemOpError(f"{_words(argv)} ({what}): {exc}") from None
    if not r.ok:
        err = _fail(argv, r)
        raise type(err)(f"{_words(argv)} ({what}) failed: {_detail(r)}")
