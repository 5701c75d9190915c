"""The user's own LaunchAgents an imported job replaces (`adopts = "launchd: FILE.plist"`).

apply unloads such a plist (bootout) and moves it out of ~/Library/LaunchAgents into
schedgen's state folder (`adopted/launchd/<namespace>/`, noting whether it was loaded),
so the job runs once, from schedgen's own plist; `uninstall` moves it back byte for
byte and loads it again if it was. A plist is found by its file name, not by the job's,
so a renamed job keeps it.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from schedgen import paths
from schedgen.machine.ops import read_file
from schedgen.plan import changes as p
from schedgen.plan.context import ApplyContext, PlanContext
from schedgen.render.artifacts import carries_marker
from schedgen.targets.launchd import launchctl
from schedgen.targets.launchd.plist_read import read_plist
from schedgen.targets.launchd.words import ADOPT_NOTE

KIND = "adopted"


class Adopted(NamedTuple):
    """A change's own facts: the user's plist and its label."""

    file: str
    label: str
    loaded: bool | None  # None: unknown (no launchctl: a review on another OS)
    kept: Path  # where apply moves it


def kept_dir(namespace: str) -> Path:
    return paths.state_dir() / "adopted" / "launchd" / namespace


def _label(path: Path, text: str) -> str:
    plist = read_plist(text.encode("utf-8", "surrogateescape")).plist
    label = plist.get("Label") if isinstance(plist, dict) else None
    return label if isinstance(label, str) and label else path.stem


def plan(ctx: PlanContext) -> list[p.Change]:
    kept = kept_dir(ctx.record.namespace)
    out: list[p.Change] = []
    if ctx.uninstall:
        for f in sorted(kept.glob("*.plist")):
            text, _ = read_file(f)
            assert text is not None
            a = Adopted(f.name, _label(f, text), (kept / f"{f.name}.loaded").exists(), kept)
            out.append(p.Change("launchd", KIND, f"adopted:{f.name}", p.CREATE,
                                paths.launch_agents_dir() / f.name, None, text,
                                targets=("launchd",), note="your own plist, put back as it was",
                                details=a))
        return out
    jobs = [j for j in ctx.config.jobs if j.adopts and j.adopts[0] == "launchd"] \
        if ctx.config else []
    if not jobs:
        return out
    services = launchctl.listing(unknown_ok=ctx.review)
    for job in jobs:
        assert job.adopts is not None
        path = paths.launch_agents_dir() / job.adopts[1]
        text, _ = read_file(path)
        if text is None or carries_marker(text):
            continue  # already moved aside (or schedgen's own)
        label = _label(path, text)
        a = Adopted(path.name, label, None if services is None else label in services, kept)
        out.append(p.Change("launchd", KIND, f"adopted:{path.name}", p.UPDATE, path, text, None,
                            job=job.name, targets=("launchd",), note=ADOPT_NOTE, details=a))
    return out


def describe(c: p.Change) -> str:
    a = c.details
    assert isinstance(a, Adopted)
    if c.action == p.CREATE:
        return f"  {a.file}: put back from {a.kept}{', loaded' if a.loaded else ''}"
    return (f"  {a.file} ({a.label})\n    replaced by job {c.job}: apply unloads it and moves "
            f"it to {a.kept} (`schedgen uninstall` puts it back)")


def apply(c: p.Change, ctx: ApplyContext) -> None:
    a = c.details
    assert isinstance(a, Adopted) and c.path is not None
    if c.action == p.CREATE:  # uninstall: back where it was, byte for byte
        text, mode = read_file(a.kept / a.file)
        if text is not None:
            ctx.ops.write(c.path, text, mode or 0o644)
            ctx.ops.remove(a.kept / a.file)
        if a.loaded:
            launchctl.bootstrap(ctx.ops, a.label, c.path)
            ctx.ops.remove(a.kept / f"{a.file}.loaded")
        ctx.did("put back", f"your plist {c.path}" + (" (loaded)" if a.loaded else ""))
        return
    ctx.ops.mkdir(a.kept)
    text, mode = read_file(c.path)
    if text is not None:  # kept before anything is turned off
        ctx.ops.write(a.kept / a.file, text, mode or 0o644)
    if a.loaded is not False:
        ctx.ops.write(a.kept / f"{a.file}.loaded", "", 0o600)
    launchctl.bootout(ctx.ops, a.label)
    ctx.ops.remove(c.path)
    ctx.did("turn off", f"your plist {a.file} (job {c.job}): unloaded, moved to {a.kept}")
