"""What an artifact is made from, as one digest: equal digests render equal contents.

apply records it beside the hash of what it wrote; when a later plan computes the same
digest and the installed file still has the recorded hash and mode, the artifact is
unchanged without rendering it (the file is still read and hashed: a hand edit shows).
A job with a time zone renders from the clock and the host's zone too: it has none.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from schedgen import __version__
from schedgen.config.model import Config, Job
from schedgen.render import shipped
from schedgen.render.artifacts import RUNTIME_PARTS
from schedgen.sha import sha256

# Every file in templates/ outside templates/runtime/ (whose parts artifacts.RUNTIME_PARTS
# lists): tests/test_in_sync.py checks the list is whole.
TEMPLATES = ("crontab.j2", "crond.j2", "job.sh.j2", "launchd.plist.j2", "notify.sh", "systemd.service.j2",
             "systemd.timer.j2")


@cache
def templates_digest() -> str:
    """The templates' and the runtime's texts, as shipped, in one digest."""
    h = sha256()
    for name in (*TEMPLATES, *(f"runtime/{part}" for part in RUNTIME_PARTS)):
        h.update(name.encode() + b"\0" + shipped.text(name).encode("utf-8", "surrogateescape")
                 + b"\0")
    return h.hexdigest()


@cache
def code_digest() -> str:
    """schedgen's own code: a change to the code that renders (an editable install, a
    reinstall of the same version) must not pass for in sync."""
    return tree_digest(str(Path(__file__).resolve().parent.parent))


def tree_digest(root: str) -> str:
    """Every module below `root` by its name, size and modification time. Stat, not
    content: about 1 ms for the package, and any doubt only costs a render."""
    h = sha256()
    for where, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(where, name))
                h.update(f"{where[len(root):]}/{name}\0{st.st_size}\0{st.st_mtime_ns}\0"
                         .encode("utf-8", "surrogateescape"))
    return h.hexdigest()


@cache
def _base(namespace: str, config_path: str) -> bytes:
    return "\0".join((__version__, code_digest(), templates_digest(), namespace,
                      config_path)).encode("utf-8", "surrogateescape")


def of(kind: str, path: Path | None, config: Config, jobs: tuple[Job, ...]) -> str | None:
    """The digest of an artifact of `kind` at `path` rendered from these jobs (the job's
    settings as loaded, in full), or None when its content depends on more than that."""
    if any(j.timezone for j in jobs):
        return None
    h = sha256(_base(config.namespace, str(config.path)))
    h.update(f"\0{kind}\0{path}\0{len(jobs)}".encode("utf-8", "surrogateescape"))
    for job in jobs:
        h.update(_job_digest(job))
    return h.hexdigest()


# Each job's settings in full, digested once per job object (kept with it, so its id is
# not reused): a job is digested for its job file and again within the crontab block or
# its units. The block hashes each job's fixed-size digest, not its whole text again
# (that was most of the block's digest: 1.4 KB a job).
_DIGESTS: dict[int, tuple[Job, bytes]] = {}


def _job_digest(job: Job) -> bytes:
    found = _DIGESTS.get(id(job))
    if found is not None and found[0] is job:
        return found[1]
    digest = sha256(repr(job).encode("utf-8", "surrogateescape")).digest()
    if len(_DIGESTS) > 20_000:  # a long-lived process (the test suite): not without end
        _DIGESTS.clear()
    _DIGESTS[id(job)] = (job, digest)
    return digest
