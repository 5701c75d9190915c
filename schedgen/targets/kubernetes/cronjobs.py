"""How the kubernetes target works: one CronJob per job, `kubectl apply --server-side`.

What is installed lives in the cluster; schedgen keeps a copy of each manifest it
applied in its state dir (`kubernetes/<namespace>/<k8s namespace>/<name>.yaml`, the
path the ownership record names), so `diff` can show file diffs with no cluster in
reach. Ownership in the cluster: a CronJob is schedgen's only if it carries
`app.kubernetes.io/managed-by: schedgen` and `schedgen/namespace: <namespace>`, and this
machine's only if its record names it or it carries this machine's install ID
(`schedgen/install`): several machines may apply one namespace to one cluster, and each
changes and removes only what it applied itself. A deletion names the one CronJob and
selects it by those labels too, so nothing else is ever deleted. A CronJob that another
field manager changed (kubectl edit, patch) is "edited": apply takes the fields back
(the object is schedgen's), and prune keeps it unless --force.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from schedgen import paths
from schedgen.errors import SystemOpError
from schedgen.machine.ops import read_file
from schedgen.machine.record_format import key
from schedgen.plan import changes as p
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.render.artifacts import MARKER, Artifact
from schedgen.targets.base import record_file, settle
from schedgen.targets.kubernetes import kubectl
from schedgen.targets.kubernetes import render as kube

KIND = "cronjob"


def copy_path(namespace: str, kns: str, name: str) -> Path:
    return paths.state_dir() / "kubernetes" / namespace / kns / f"{name}.yaml"


_ID = re.compile(r"[0-9a-f]{16}")


def install_id() -> str:
    """This machine's ID (per user: the state dir's), made on first use and kept; apply
    labels every CronJob with it."""
    path = paths.state_dir() / "install-id"
    try:
        if not path.exists():
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp = path.with_name(f".install-id.{os.getpid()}")
            try:
                tmp.write_text(os.urandom(8).hex() + "\n")
                os.link(tmp, path)  # the first of two racing commands wins
            except FileExistsError:
                pass
            finally:
                tmp.unlink(missing_ok=True)
        text = path.read_text().strip()
    except OSError as exc:
        raise SystemOpError(f"cannot keep this machine's install ID in {path}: "
                            f"{exc.strerror or exc}") from None
    if not _ID.fullmatch(text):
        raise SystemOpError(f"{path} is not an install ID (16 hex digits); it names the "
                            "CronJobs this machine applied: put it back, do not replace it")
    return text


def _install(obj: dict[str, Any] | None) -> str | None:
    return ((obj or {}).get("metadata", {}).get("labels") or {}).get(kube.INSTALL_LABEL)


def _ref(path: Path) -> tuple[str, str]:
    return path.parent.name, path.stem


def _ours(obj: dict[str, Any], namespace: str) -> bool:
    labels = obj.get("metadata", {}).get("labels") or {}
    return (labels.get(kube.MANAGED_BY) == "schedgen"
            and labels.get(kube.NAMESPACE_LABEL) == namespace)


def _other_managers(obj: dict[str, Any]) -> list[str]:
    """Field managers that changed the object after schedgen last applied it.

    A manager that only holds fields schedgen never sets (what was there before a
    --force takeover) is not a change; status writers (the controller) never are.
    """
    entries = obj.get("metadata", {}).get("managedFields") or []
    ours = max((m.get("time") or "" for m in entries
                if m.get("manager") == kubectl.FIELD_MANAGER), default="")
    out = []
    for m in entries:
        if m.get("subresource") == "status" or m.get("manager") == kubectl.FIELD_MANAGER:
            continue
        if m.get("manager") and (m.get("time") or "") > ours and m["manager"] not in out:
            out.append(m["manager"])  # RFC 3339 times in UTC compare as strings
    return out


def _live(obj: dict[str, Any] | None) -> dict[str, Any]:
    """What `status` and `diff --json` show of a CronJob in the cluster."""
    if obj is None:
        return {"exists": False}
    spec, st = obj.get("spec", {}), obj.get("status", {})
    return {
        "exists": True, "suspend": bool(spec.get("suspend")),
        "schedule": spec.get("schedule"), "time_zone": spec.get("timeZone"),
        "last_schedule": st.get("lastScheduleTime"), "last_success": st.get("lastSuccessfulTime"),
        "active": len(st.get("active") or []), "other_managers": _other_managers(obj),
        "install": _install(obj),
    }


class CronJobs:
    name = "kubernetes"
    iid = ""  # this machine's install ID, read when planning

    def plan(self, ctx: PlanContext, earlier: tuple[p.Change, ...]) -> list[p.Change]:
        if "kubernetes" not in ctx.selected:
            return []
        ns = ctx.record.namespace
        wanted = ctx.artifacts(KIND)
        recorded = ctx.record.of_kind(KIND)
        if not wanted and not recorded:
            return []  # no kubectl call where nothing of ours can be
        self.iid = install_id()
        wanted = [self._labelled(ctx, a) for a in wanted]
        placed = {a.job: self._place(ctx, a) for a in wanted}
        spaces = {kns for kns, _ in placed.values()}
        spaces |= {_ref(Path(e.path or ""))[0] for e in recorded}
        cluster: dict[str, dict[str, dict[str, Any]] | None] = {}
        unreachable = False
        for kns in sorted(spaces):
            cluster[kns] = None
            if unreachable:
                continue  # one cluster (kubectl's context): no use asking again
            try:
                items = kubectl.list_objects("cronjobs", kns)
                cluster[kns] = {i.get("metadata", {}).get("name", ""): i for i in items}
            except kubectl.Unreachable as exc:
                unreachable = True
                ctx.unknown[self.name] = kubectl.unknown_words(str(exc))
        out: list[p.Change] = []
        seen: set[str] = set()
        for a in wanted:
            kns, name = placed[a.job]
            live = cluster[kns]
            out.append(self._wanted(ctx, a, kns, name, None if live is None else live.get(name),
                                    live is not None))
            seen.add(f"{kns}/{name}")
        for e in recorded:
            kns, name = _ref(Path(e.path or ""))
            if f"{kns}/{name}" not in seen:
                seen.add(f"{kns}/{name}")
                live = cluster[kns]
                out.append(self._unwanted(ctx, e.job, kns, name,
                                          None if live is None else live.get(name), live is not None))
        for kns, live in sorted(cluster.items()):  # this machine's by label, known to no record
            for name, obj in sorted((live or {}).items()):
                if f"{kns}/{name}" not in seen and _ours(obj, ns) and _install(obj) == self.iid:
                    job = (obj["metadata"].get("labels") or {}).get(kube.JOB_LABEL)
                    out.append(self._unwanted(ctx, job, kns, name, obj, True))
        _attach_kubectl_diff(out, ctx)
        return out

    def _labelled(self, ctx: PlanContext, a: Artifact) -> Artifact:
        """The manifest as this machine applies it: with its install ID."""
        job = ctx.job(a.job)
        assert job is not None and ctx.config is not None
        return a._replace(content=kube.manifest(job, ctx.config, MARKER, self.iid))

    def _place(self, ctx: PlanContext, a: Artifact) -> tuple[str, str]:
        job = ctx.config.job(a.job or "") if ctx.config is not None else None
        assert job is not None and job.kubernetes is not None
        return job.kubernetes.namespace, job.name

    def _wanted(self, ctx: PlanContext, a: Artifact, kns: str, name: str,
                obj: dict[str, Any] | None, known: bool) -> p.Change:
        path = copy_path(ctx.record.namespace, kns, name)
        k = key(KIND, path)
        copy, _ = read_file(path)
        entry = ctx.record.get(k)
        c = p.Change(self.name, KIND, k, p.UNCHANGED, path, copy, a.content, job=a.job,
                     targets=("kubernetes",), mode=0o600, ref=f"{kns}/{name}",
                     details=_live(obj) if known else None)
        if not known:  # a config changed since the last apply is seen; the rest is not
            if copy is None or entry is None:
                return c._replace(action=p.CREATE, note="cluster state unknown", unknown=True)
            if copy != a.content:
                return c._replace(action=p.UPDATE, note="cluster state unknown")
            return c._replace(unknown=True)
        if obj is None:
            return c._replace(action=p.CREATE, before=None,
                              note="not in the cluster" if entry else "")
        if not _ours(obj, ctx.record.namespace):
            owner = (obj.get("metadata", {}).get("labels") or {}).get(kube.NAMESPACE_LABEL)
            whose = (f"applied by schedgen for namespace {owner!r}" if owner
                     else "not applied by schedgen (no schedgen labels)")
            how = ", overwritten (--force)" if ctx.force else "; --force overwrites it"
            return c._replace(action=p.UPDATE if ctx.force else p.CONFLICT, before=copy,
                              note=whose + how)
        theirs = _install(obj)
        if theirs is not None and theirs != self.iid:
            if ctx.force:
                return c._replace(action=p.UPDATE, before=copy, edited=True, note=(
                    f"taken over from the machine with install ID {theirs} (--force)"))
            return c._replace(action=p.CONFLICT, before=copy, note=(
                f"applied by another machine (install ID {theirs}) for namespace "
                f"{ctx.record.namespace}: that machine changes and removes it; "
                "--force takes it over"))
        others = _other_managers(obj)
        edited = f"changed in the cluster by {', '.join(others)}; apply takes its fields back"
        if copy is None or entry is None:
            note = "in the cluster, but not recorded here (applied from elsewhere?)"
            return c._replace(action=p.UPDATE, edited=bool(others),
                              note=edited if others else note)
        if copy != a.content or others:
            return c._replace(action=p.UPDATE, edited=bool(others), note=edited if others else "")
        return c

    def _unwanted(self, ctx: PlanContext, job: str | None, kns: str, name: str,
                  obj: dict[str, Any] | None, known: bool) -> p.Change:
        path = copy_path(ctx.record.namespace, kns, name)
        copy, _ = read_file(path)
        c = p.Change(self.name, KIND, key(KIND, path), p.DELETE, path, copy, None, job=job,
                     targets=("kubernetes",), mode=0o600, ref=f"{kns}/{name}",
                     details=_live(obj) if known else None)
        if known and obj is None:
            return c._replace(action=p.FORGET, note="already gone from the cluster")
        if known and obj is not None and not _ours(obj, ctx.record.namespace):
            return c._replace(action=p.DISOWN, note="no longer carries schedgen's labels; "
                                                    "left in place as yours")
        theirs = _install(obj)
        if known and theirs is not None and theirs != self.iid:
            return c._replace(action=p.DISOWN, note=(
                f"applied since by another machine (install ID {theirs}); left in place "
                "as that machine's"))
        gone = ctx.why_unwanted(job)
        if not ctx.explicit((job,) if job else ()) and not ctx.prune:
            return c._replace(action=p.ORPHAN, note=f"{gone}; apply --prune removes it")
        live = c.details or {}
        if live.get("other_managers") and not ctx.force and not ctx.uninstall:
            return c._replace(action=p.KEPT, edited=True, note=(
                f"changed in the cluster by {', '.join(live['other_managers'])}; --force removes it"))
        if live.get("active") and not ctx.force and not ctx.uninstall:
            c = c._replace(deferred=f"running ({live['active']} active Job"
                                    f"{'s' if live['active'] != 1 else ''})")
        return c._replace(note="" if ctx.uninstall else gone)

    def apply(self, change: p.Change, ctx: ApplyContext) -> None:
        c = change
        if c.details is None and c.action not in (p.ORPHAN, p.KEPT):
            # The plan could not see the cluster: nothing is done on a guess. Asking again
            # gives the error with the command that failed.
            kubectl.list_objects("cronjobs", (c.ref or "/").split("/")[0])
            raise SystemOpError(f"the cluster answered only after the plan was made; "
                                f"{c.kind} {c.where} was not applied. Run apply again.")
        if c.action in (p.FORGET, p.DISOWN) and c.path is not None:
            ctx.ops.remove(c.path)
        if settle(ctx, c):
            return
        assert c.path is not None and c.ref is not None
        kns, name = c.ref.split("/")
        if c.action == p.DELETE:
            if c.deferred:
                ctx.say(f"left alone: cronjob {c.ref} is {c.deferred}; deleting it would stop "
                        "them. Run apply again when they have finished, or use --force.")
                return
            # By name, and only while it still carries the labels it had when planned.
            selector = f"{kube.selector(ctx.record.namespace)},{kube.JOB_LABEL}={name}"
            mine = (c.details or {}).get("install")
            if mine:
                selector += f",{kube.INSTALL_LABEL}={mine}"
            kubectl.delete(ctx.ops, kns, name, selector, f"cronjob {c.ref}")
            ctx.ops.remove(c.path)
            ctx.record.drop(c.key)
            ctx.did("remove", f"cronjob {c.ref}" + (f" ({c.note})" if c.note else ""))
            return
        assert c.after is not None
        force = ctx.force or c.edited
        kubectl.apply(ctx.ops, c.after, f"cronjob {c.ref}", force)
        ctx.ops.write(c.path, c.after, 0o600)  # the cluster first: the record follows it
        record_file(ctx, c, c.after)
        ctx.did("create" if c.action == p.CREATE else "update", f"cronjob {c.ref}"
                + (f" ({c.note})" if c.note else ""))


def _attach_kubectl_diff(changes: list[p.Change], ctx: PlanContext) -> None:
    """The cluster's own view of each pending update (`kubectl diff`), when it can be asked."""
    pending = [c for c in changes if c.action == p.UPDATE and c.details and c.details.get("exists")
               and c.after is not None]
    if not pending:
        return
    try:
        parts = kubectl.diff([c.after for c in pending if c.after],
                             force=ctx.force or any(c.edited for c in pending))
    except SystemOpError as exc:
        ctx.warnings.append(f"kubernetes: {exc}")
        return
    if "" in parts:
        ctx.warnings.append(f"kubernetes: kubectl diff says:\n{parts['']}")
    for i, c in enumerate(changes):
        if c.ref in parts and c.details is not None:
            changes[i] = c._replace(details={**c.details, "kubectl_diff": parts[c.ref]})

