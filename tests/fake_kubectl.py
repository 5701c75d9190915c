"""A file-backed fake `kubectl` that keeps a cluster's state the way the API server does.

Written as a small executable first on PATH (as tests/fakes.py does for crontab and
launchctl). What it models, because schedgen depends on it:
- server-side apply: every field belongs to the field manager that set it; a manager
  that sets a field another one owns, to another value, gets kubectl's conflict error
  unless --force-conflicts; fields a manager stops sending are removed; server defaults
  are filled in and owned by nobody; managedFields are listed on every object;
- the API server's checks schedgen could get wrong: a namespace must exist, a CronJob's
  schedule takes day of week 0-6 (robfig/cron), its name at most 52 characters, its
  time zone must exist, its pods restartPolicy Never or OnFailure;
- `get -l`, `delete` by name, `-l` or `--field-selector` (metadata.name/namespace only, as
  for CronJobs; a name with a selector refused, as kubectl does), with cascading deletion
  of the CronJob's Jobs, `diff`
  (0 none, 1 differences, 2 error, printed as `diff -u -N LIVE MERGED` per object);
- errors: an unreachable server (the real message), Forbidden, a failure on demand.
Each call is logged.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from tests.fakeserve import client
from tests.helpers import write_executable

KUBECTL = r'''#!__PYTHON__
import sys
sys.path.insert(0, __YAML_DIR__)
import datetime, json, os  # yaml, difflib, zoneinfo where needed: each call is a process

path = os.environ["FAKE_KUBECTL_STATE"]
state = json.load(open(path)) if os.path.exists(path) else {}
for k, v in (("reachable", True), ("namespaces", ["default", "jobs"]), ("objects", {}),
             ("fail_next", []), ("calls", []), ("forbidden", []), ("rv", 100)):
    state.setdefault(k, v)
state["objects"].setdefault("cronjobs", {})
state["objects"].setdefault("jobs", {})
args = sys.argv[1:]
state["calls"].append(args)
# The server's clock: a second later at every write, so managedFields times order writes.
state.setdefault("clock", 1796108400)  # 2026-12-01T07:00:00Z

def now():
    state["clock"] += 1
    return datetime.datetime.fromtimestamp(state["clock"], datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

NOW = now()

def done(code=0, out="", err=""):
    json.dump(state, open(path, "w"), indent=1)
    sys.stdout.write(out)
    sys.stderr.write(err)
    sys.exit(code)

flags = {}
words = []
i = 0
while i < len(args):
    a = args[i]
    short = {"-n": "n", "--namespace": "n", "-l": "l", "--selector": "l", "-o": "o",
             "--output": "o", "-f": "f", "--filename": "f"}
    if a in short:
        flags[short[a]] = args[i + 1]
        i += 2
        continue
    if a.startswith("--"):
        name, _, value = a[2:].partition("=")
        flags[name] = value or True
    else:
        words.append(a)
    i += 1
verb = words[0] if words else ""

if not state["reachable"]:
    klog = ('E1201 07:00:00.000000   4242 memcache.go:265] "Unhandled Error" err="couldn\'t get '
            'current server API group list: Get \\"http://localhost:8080/api?timeout=32s\\": dial '
            'tcp 127.0.0.1:8080: connect: connection refused"\n')
    refused = 'Get "http://localhost:8080/%s?timeout=32s": dial tcp 127.0.0.1:8080: connect: connection refused'
    if verb == "apply":  # as kubectl 1.32 says it: it fails fetching the schema first
        done(1, err=f'error: error validating "STDIN": error validating data: failed to download '
                    f'openapi: {refused % "openapi/v2"}; if you choose to ignore these errors, '
                    'turn validation off with --validate=false\n')
    if verb == "diff":
        done(2, err=f'error: unable to recognize "STDIN": {refused % "api"}\n')
    done(1, err=klog * 3 + "The connection to the server localhost:8080 was refused - did you "
                          "specify the right host or port?\n")
for n, f in enumerate(state["fail_next"]):
    if f["verb"] == verb:
        state["fail_next"].pop(n)
        done(f["code"], err=f["message"] + "\n")

def rv():
    state["rv"] += 1
    return str(state["rv"])

def resource(word):
    return {"cronjob": "cronjobs", "cronjobs": "cronjobs", "cronjob.batch": "cronjobs",
            "cj": "cronjobs", "job": "jobs", "jobs": "jobs"}.get(word)

def matches(labels, selector):
    for term in filter(None, (selector or "").split(",")):
        k, _, v = term.partition("=")
        if labels.get(k) != v:
            return False
    return True

# -- an object as flat fields: path (a JSON list; {"name": x} picks a list item) -> value
def flatten(obj, prefix=()):
    out = []
    if isinstance(obj, dict) and obj:
        for k, v in obj.items():
            out += flatten(v, prefix + (k,))
        return out
    if isinstance(obj, list) and obj and all(isinstance(x, dict) and "name" in x for x in obj):
        for item in obj:
            out.append((json.dumps(list(prefix + ({"name": item["name"]},))), None))
            out += flatten({k: v for k, v in item.items() if k != "name"},
                           prefix + ({"name": item["name"]},))
        return out
    return [(json.dumps(list(prefix)), obj)]

def unflatten(pairs):
    root = {}
    for key, value in pairs:
        p = json.loads(key)
        node = root
        for n, part in enumerate(p):
            last = n == len(p) - 1
            if isinstance(part, dict):
                items = node if isinstance(node, list) else None
                item = next(x for x in items if x.get("name") == part["name"]) if items is not None and any(x.get("name") == part["name"] for x in items) else None
                if item is None:
                    item = {"name": part["name"]}
                    items.append(item)
                node = item
                continue
            nxt = p[n + 1] if not last else None
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, [] if isinstance(nxt, dict) else {})
    return root

def dotted(key):
    s = ""
    for part in json.loads(key):
        s += f'[name="{part["name"]}"]' if isinstance(part, dict) else f".{part}"
    return s

DEFAULTS = [
    (["spec", "concurrencyPolicy"], "Allow"), (["spec", "suspend"], False),
    (["spec", "successfulJobsHistoryLimit"], 3), (["spec", "failedJobsHistoryLimit"], 1),
    (["spec", "jobTemplate", "spec", "template", "spec", "dnsPolicy"], "ClusterFirst"),
    (["spec", "jobTemplate", "spec", "template", "spec", "schedulerName"], "default-scheduler"),
    (["spec", "jobTemplate", "spec", "template", "spec", "terminationGracePeriodSeconds"], 30),
]

def render(rec):
    """The object as the API server returns it."""
    obj = unflatten(list(rec["flat"].items()))
    for p, v in DEFAULTS:
        node = obj
        for part in p[:-1]:
            node = node.setdefault(part, {})
        node.setdefault(p[-1], v)
    for c in obj.get("spec", {}).get("jobTemplate", {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
        c.setdefault("imagePullPolicy", "Always" if c.get("image", "").endswith(":latest") else "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
    meta = obj.setdefault("metadata", {})
    meta.update(rec["meta"])
    meta["managedFields"] = [
        {"manager": m, "operation": info["operation"], "apiVersion": "batch/v1", "time": info["time"],
         "fieldsType": "FieldsV1", "fieldsV1": {dotted(k): {} for k, o in rec["owners"].items() if o == m},
         **({"subresource": info["subresource"]} if info.get("subresource") else {})}
        for m, info in rec["managers"].items()]
    obj["status"] = rec.get("status", {})
    return obj

def check(doc):
    meta = doc.get("metadata") or {}
    name, ns = meta.get("name", ""), meta.get("namespace", "default")
    if doc.get("apiVersion") != "batch/v1" or doc.get("kind") != "CronJob":
        return f'error: resource mapping not found for name: "{name}": no matches for kind "{doc.get("kind")}" in version "{doc.get("apiVersion")}"'
    if ns not in state["namespaces"]:
        return f'Error from server (NotFound): namespaces "{ns}" not found'
    bad = []
    if len(name) > 52:
        bad.append(f'metadata.name: Invalid value: "{name}": must be no more than 52 characters')
    spec = doc.get("spec") or {}
    fields = str(spec.get("schedule", "")).split()
    if len(fields) != 5:
        bad.append(f'spec.schedule: Invalid value: "{spec.get("schedule")}": expected exactly 5 fields, found {len(fields)}')
    else:
        for term in fields[4].replace("-", ",").replace("/", ",").split(","):
            if term.isdigit() and int(term) > 6:
                bad.append(f'spec.schedule: Invalid value: "{spec["schedule"]}": end of range ({term}) above maximum (6): {fields[4]}')
                break
    tz = spec.get("timeZone")
    if tz is not None:
        try:
            import zoneinfo
            zoneinfo.ZoneInfo(tz)
        except Exception:
            bad.append(f'spec.timeZone: Invalid value: "{tz}": unknown time zone {tz}')
    pod = spec.get("jobTemplate", {}).get("spec", {}).get("template", {}).get("spec", {})
    if pod.get("restartPolicy") not in ("Never", "OnFailure"):
        bad.append('spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"')
    if bad:
        return f'The CronJob "{name}" is invalid: \n' + "\n".join(f"* {b}" for b in bad)
    return None

def ssa(doc, manager, force):
    """(new record, error): server-side apply of doc by manager onto what is stored."""
    meta = doc["metadata"]
    key = f'{meta.get("namespace", "default")}/{meta["name"]}'
    old = state["objects"]["cronjobs"].get(key)
    rec = json.loads(json.dumps(old)) if old else {
        "flat": {}, "owners": {}, "managers": {}, "status": {},
        "meta": {"uid": f"uid-{rv()}", "creationTimestamp": NOW, "generation": 0}}
    doc = json.loads(json.dumps(doc))
    doc["metadata"].setdefault("namespace", "default")
    new = dict(flatten(doc))
    conflicts = {}
    for k, v in new.items():
        owner = rec["owners"].get(k)
        if owner and owner != manager and k in rec["flat"] and rec["flat"][k] != v:
            conflicts.setdefault(owner, []).append(k)
    if conflicts and not force:
        n = sum(len(v) for v in conflicts.values())
        parts = []
        for owner, keys in conflicts.items():
            if len(keys) == 1 and len(conflicts) == 1:
                parts.append(f'conflict with "{owner}" using batch/v1: {dotted(keys[0])}')
            else:
                parts.append(f'conflicts with "{owner}" using batch/v1:\n' + "\n".join(f"- {dotted(k)}" for k in keys))
        return None, (f"error: Apply failed with {n} conflict{'s' if n != 1 else ''}: " + "\n".join(parts) + "\n"
                      "Please review the fields above--they currently have other managers. Here are\n"
                      "the ways you can resolve this warning:\n"
                      "* If you intend to manage all of these fields, please re-run the apply\n"
                      "  command with the `--force-conflicts` flag.\n"
                      "See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts")
    spec_before = {k: v for k, v in rec["flat"].items() if '"spec"' in k}
    for k in [k for k, o in rec["owners"].items() if o == manager and k not in new]:
        rec["owners"].pop(k)
        rec["flat"].pop(k, None)  # no one else set it: it goes
    for k, v in new.items():
        rec["flat"][k] = v
        rec["owners"][k] = manager
    for m in list(rec["managers"]):
        if m != manager and not any(o == m for o in rec["owners"].values()) and not rec["managers"][m].get("subresource"):
            del rec["managers"][m]
    rec["managers"][manager] = {"operation": "Apply", "time": NOW}
    if {k: v for k, v in rec["flat"].items() if '"spec"' in k} != spec_before:
        rec["meta"]["generation"] += 1
    rec["meta"]["resourceVersion"] = rv()
    return rec, None

def docs():
    import yaml
    text = sys.stdin.read() if flags.get("f") == "-" else open(flags["f"]).read()
    return [d for d in yaml.safe_load_all(text) if d]

def listing(kind, items):
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items,
                       "metadata": {"resourceVersion": ""}}, indent=4) + "\n"

if verb == "get":
    kind = resource(words[1]) if len(words) > 1 else None
    ns = flags.get("n", "default")
    if kind is None:
        done(1, err=f'error: the server doesn\'t have a resource type "{words[1] if len(words) > 1 else ""}"\n')
    if ns in state["forbidden"]:
        api = "batch"
        done(1, err=f'Error from server (Forbidden): {kind}.batch is forbidden: User "dev" cannot list resource "{kind}" in API group "{api}" in the namespace "{ns}"\n')
    items = []
    for key, rec in sorted(state["objects"][kind].items()):
        if key.split("/")[0] != ns:
            continue
        obj = render(rec) if kind == "cronjobs" else rec
        if matches(obj.get("metadata", {}).get("labels") or {}, flags.get("l")):
            items.append(obj)
    done(0, out=listing(kind, items))
elif verb == "apply":
    if flags.get("server-side") is not True or not str(flags.get("field-manager", "")):
        done(1, err="fake kubectl: schedgen must use --server-side with a --field-manager\n")
    out = []
    for doc in docs():
        err = check(doc)
        if err:
            done(1, out="".join(out), err=err + "\n")
        rec, err = ssa(doc, flags["field-manager"], bool(flags.get("force-conflicts")))
        if err:
            done(1, out="".join(out), err=err + "\n")
        meta = doc["metadata"]
        state["objects"]["cronjobs"][f'{meta.get("namespace", "default")}/{meta["name"]}'] = rec
        out.append(f'cronjob.batch/{meta["name"]} serverside-applied\n')
    done(0, out="".join(out))
elif verb == "diff":
    out = []
    for doc in docs():
        err = check(doc)
        if err:
            done(2, err=err + "\n")
        meta = doc["metadata"]
        key = f'{meta.get("namespace", "default")}/{meta["name"]}'
        old = state["objects"]["cronjobs"].get(key)
        rec, err = ssa(doc, flags.get("field-manager", "kubectl"), bool(flags.get("force-conflicts")))
        if err:
            done(2, err=err + "\n")
        import difflib, yaml
        def text(r):
            if r is None:
                return []
            obj = render(r)
            obj["metadata"].pop("managedFields", None)
            return yaml.safe_dump(obj, sort_keys=True, default_flow_style=False).splitlines(keepends=True)
        a, b = text(old), text(rec)
        if a != b:
            name = f'batch.v1.CronJob.{key.replace("/", ".")}'
            live, merged = f"/tmp/LIVE-4242/{name}", f"/tmp/MERGED-4243/{name}"
            out.append(f"diff -u -N {live} {merged}\n")
            stamp = "\t2026-12-01 07:00:00.000000000 +0000"
            out += list(difflib.unified_diff(a, b, fromfile=live + stamp, tofile=merged + stamp))
    done(1 if out else 0, out="".join(out))
elif verb == "delete":
    kind = resource(words[1]) if len(words) > 1 else None
    ns = flags.get("n", "default")
    names = words[2:]
    if kind != "cronjobs":
        done(1, err="fake kubectl: only cronjobs are deleted\n")
    if names and (flags.get("l") or flags.get("field-selector")):
        done(1, err="error: name cannot be provided when a selector is specified\n")
    if not names and not flags.get("l") and not flags.get("field-selector") and not flags.get("all"):
        done(1, err="error: resource(s) were provided, but no name was specified\n")
    fields = {}
    for term in filter(None, str(flags.get("field-selector") or "").split(",")):
        k, _, v = term.partition("=")
        if k not in ("metadata.name", "metadata.namespace"):
            done(1, err=f'Error from server (BadRequest): Unable to find "batch/v1, Resource=cronjobs" '
                        f'that match label selector "{flags.get("l", "")}", field selector '
                        f'"{flags["field-selector"]}": field label not supported: {k}\n')
        fields[k] = v
    if len(names) == 1:
        fields["metadata.name"] = names[0]
        if f"{ns}/{names[0]}" not in state["objects"]["cronjobs"]:
            done(1, err=f'Error from server (NotFound): cronjobs.batch "{names[0]}" not found\n')
    out = []
    for key, rec in sorted(state["objects"]["cronjobs"].items()):
        obj = render(rec)
        if fields.get("metadata.name", key.split("/")[1]) != key.split("/")[1]:
            continue
        if key.split("/")[0] == ns and matches(obj["metadata"].get("labels") or {}, flags.get("l")):
            del state["objects"]["cronjobs"][key]
            out.append(f'cronjob.batch "{key.split("/")[1]}" deleted\n')
            if flags.get("cascade") != "orphan":
                for jk, job in list(state["objects"]["jobs"].items()):
                    if any(o.get("uid") == rec["meta"]["uid"] for o in job["metadata"].get("ownerReferences", [])):
                        del state["objects"]["jobs"][jk]
    if not out:
        done(0, err=f"No resources found\n")
    done(0, out="".join(out))
else:
    done(1, err=f'error: unknown command "{verb}" for "kubectl"\n')
'''


def _script() -> str:
    yaml_dir = str(Path(yaml.__file__).resolve().parent.parent)
    return client("kubectl", KUBECTL.replace("__YAML_DIR__", repr(yaml_dir)))


class FakeKubectl:
    def __init__(self, bin_dir: Path, root: Path):
        self.state_file = root / "kubectl.json"
        self.exe = write_executable(bin_dir / "kubectl", _script())
        self.env = {"FAKE_KUBECTL_STATE": str(self.state_file)}

    def state(self) -> dict[str, Any]:
        if not self.state_file.exists():
            return {"reachable": True, "namespaces": ["default", "jobs"], "fail_next": [],
                    "calls": [], "forbidden": [], "rv": 100,
                    "objects": {"cronjobs": {}, "jobs": {}}}
        return json.loads(self.state_file.read_text())

    def _save(self, s: dict[str, Any]) -> None:
        self.state_file.write_text(json.dumps(s))

    def _get(self, kind: str, ns: str) -> list[dict[str, Any]]:
        r = self.call("get", kind, "-n", ns, "-o", "json")
        return json.loads(r)["items"]

    def call(self, *args: str) -> str:
        """Run the fake itself (as a user would) and return its output."""
        import subprocess

        env = {**os.environ, **self.env}
        p = subprocess.run([str(self.exe), *args], env=env,
                           capture_output=True, text=True, check=True)
        return p.stdout

    def cronjobs(self, ns: str = "jobs") -> dict[str, dict[str, Any]]:
        """name -> the CronJob as `kubectl get` shows it."""
        return {o["metadata"]["name"]: o for o in self._get("cronjobs", ns)}

    def calls(self) -> list[list[str]]:
        return self.state()["calls"]

    def mutating_calls(self) -> list[list[str]]:
        return [c for c in self.calls() if c and c[0] in ("apply", "delete")]

    def clear_calls(self) -> None:
        s = self.state()
        s["calls"] = []
        self._save(s)

    def set_reachable(self, reachable: bool) -> None:
        s = self.state()
        s["reachable"] = reachable
        self._save(s)

    def forbid(self, ns: str) -> None:
        s = self.state()
        s["forbidden"].append(ns)
        self._save(s)

    def fail_next(self, verb: str, code: int, message: str) -> None:
        s = self.state()
        s["fail_next"].append({"verb": verb, "code": code, "message": message})
        self._save(s)

    def set_namespaces(self, names: list[str]) -> None:
        s = self.state()
        s["namespaces"] = names
        self._save(s)

    def put_foreign(self, ns: str, name: str, labels: dict[str, str] | None = None,
                    manager: str = "kubectl-client-side-apply") -> None:
        """A CronJob someone else created (every field theirs)."""
        doc = {"apiVersion": "batch/v1", "kind": "CronJob",
               "metadata": {"name": name, "namespace": ns, "labels": labels or {"team": "web"}},
               "spec": {"schedule": "0 1 * * *", "jobTemplate": {"spec": {"template": {"spec": {
                   "restartPolicy": "OnFailure",
                   "containers": [{"name": "main", "image": "nginx:1.27"}]}}}}}}
        p = self._run_stdin(["apply", "--server-side", f"--field-manager={manager}", "-f", "-"],
                            yaml.safe_dump(doc))
        assert p.returncode == 0, p.stderr
        s = self.state()
        s["calls"].pop()  # the test's own doing, not schedgen's
        self._save(s)

    def _run_stdin(self, args: list[str], text: str):  # noqa: ANN202
        import subprocess

        env = {**os.environ, **self.env}
        return subprocess.run([str(self.exe), *args], env=env,
                              input=text, capture_output=True, text=True)

    def edit(self, ns: str, name: str, path: list[Any], value: Any,
             manager: str = "kubectl-edit") -> None:
        """What `kubectl edit` does: the field takes the value and belongs to `manager`."""
        s = self.state()
        rec = s["objects"]["cronjobs"][f"{ns}/{name}"]
        k = json.dumps(path)
        rec["flat"][k] = value
        rec["owners"][k] = manager
        s["clock"] = s.get("clock", 1796108400) + 1
        stamp = datetime.fromtimestamp(s["clock"], UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        rec["managers"][manager] = {"operation": "Update", "time": stamp}
        self._save(s)

    def run_job(self, ns: str, cronjob: str, name: str, outcome: str,
                started: str = "2026-12-01T06:15:00Z", finished: str | None = None,
                reason: str | None = None) -> None:
        """What the CronJob controller does at a firing: a Job, and the CronJob's status."""
        s = self.state()
        rec = s["objects"]["cronjobs"][f"{ns}/{cronjob}"]
        labels = {json.loads(k)[-1]: v for k, v in rec["flat"].items()
                  if json.loads(k)[:4] == ["spec", "jobTemplate", "metadata", "labels"]}
        st: dict[str, Any] = {"startTime": started}
        if outcome == "ok":
            st.update(completionTime=finished or started, succeeded=1, conditions=[
                {"type": "Complete", "status": "True", "lastTransitionTime": finished or started}])
        elif outcome == "failed":
            st.update(failed=1, conditions=[{"type": "Failed", "status": "True",
                                             "reason": reason or "BackoffLimitExceeded",
                                             "lastTransitionTime": finished or started}])
        else:
            st.update(active=1)
        s["objects"]["jobs"][f"{ns}/{name}"] = {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "labels": labels, "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "CronJob", "name": cronjob,
                 "uid": rec["meta"]["uid"], "controller": True}]},
            "status": st}
        status = rec.setdefault("status", {})
        status["lastScheduleTime"] = started
        if outcome == "ok":
            status["lastSuccessfulTime"] = finished or started
        active = [a for a in status.get("active", []) if a["name"] != name]
        if outcome == "running":
            active.append({"kind": "Job", "name": name, "namespace": ns, "apiVersion": "batch/v1"})
        status["active"] = active
        rec["managers"]["kube-controller-manager"] = {"operation": "Update", "time": started,
                                                     "subresource": "status"}
        self._save(s)

    def jobs(self, ns: str = "jobs") -> dict[str, dict[str, Any]]:
        return {o["metadata"]["name"]: o for o in self._get("jobs", ns)}
