"""Checks against input that would break out of where it is written, after the model is built.

Everything a config says ends up inside a crontab line, a plist (XML), a bash file
or a file name. Values are quoted or escaped where they are written; what cannot be
made harmless that way is refused here, by `validate`, naming the job and field:
- control characters (and U+2028/U+2029) in the config's own path, in any path, PATH
  entry, description or queue pattern: a newline in a path would start a new crontab
  line, and XML 1.0 cannot hold most control characters at all;
- names longer than the file system takes (a label is a file name: `<label>.plist`);
- queue folders that are the same folder, or one inside another, once symlinks and
  `..` are resolved (every run would re-claim the files it just moved);
- queue folders on different file systems: `mv` then copies and deletes, which is no
  atomic claim (checked on the folders that exist; the wrapper checks again at run
  time, templates/runtime/90-fscheck.sh).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from schedgen.config.model import Config, Job

# C0 controls but tab, DEL, C1 controls, line/paragraph separators, non-characters.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ufffe\uffff]")
NAME_MAX = 255  # bytes in one path component (macOS and Linux)
PATH_MAX = 1023  # bytes in a whole path (macOS's PATH_MAX is 1024 with the NUL)
NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")

Report = Callable[[str, str], None]  # (where, message)


def control(text: str) -> str | None:
    """The first control character in `text`, spelled out, or None."""
    m = _CONTROL.search(text)
    return f"U+{ord(m.group()):04X}" if m else None


def namespace_name(value: str) -> str:
    """A namespace given on the command line (it becomes a file name and a marker)."""
    if not NAMESPACE.fullmatch(value):
        raise ValueError(f"{value!r} is not a namespace: use A-Z, a-z, 0-9, '_' and '-', "
                         "starting with a letter or digit, at most 64 characters")
    return value


def check(config: Config, problem: Report) -> None:
    bad = control(str(config.path))
    if bad:
        problem("config", f"the config's path holds a control character ({bad}); it is written "
                          "into crontab and wrapper comments: move jobs.toml to a plain path")
    clean: set[str] = set()  # texts found clean: most are shared by every job (folders)
    sizes: dict[str, int] = {}  # a folder's length in bytes, likewise
    for job in config.jobs:
        _job(job, problem, clean, sizes)


def _job(job: Job, problem: Report, clean: set[str] | None = None,
         sizes: dict[str, int] | None = None) -> None:
    w = f"jobs.{job.name}"
    for field, value in _texts(job):
        if clean is not None and value in clean:
            continue
        bad = control(value)
        if bad:
            problem(f"{w}.{field}", f"holds a control character ({bad}); it would be written "
                                    "into a crontab line, a plist or a wrapper")
        elif clean is not None:
            clean.add(value)
    _lengths(job, problem, {} if sizes is None else sizes)
    if job.queue is not None:
        _queue(job, problem)


def _texts(job: Job) -> list[tuple[str, str]]:
    out = [("description", job.description), ("log_root", str(job.log_root)),
           ("lock_dir", str(job.lock_dir)), ("wrapper_dir", str(job.wrapper_dir))]
    if job.working_dir is not None:
        out.append(("working_dir", str(job.working_dir)))
    if job.env_file is not None:
        out.append(("env_file", str(job.env_file)))
    out += [(f"path[{i}]", p) for i, p in enumerate(job.path)]
    if job.queue is not None:
        q = job.queue
        out += [("queue.inbox", str(q.inbox)), ("queue.processing", str(q.processing)),
                ("queue.processed", str(q.processed)), ("queue.failed", str(q.failed)),
                ("queue.pattern", q.pattern)]
    return out


def too_long(path: Path) -> str | None:
    whole = len(os.fsencode(path))
    if whole <= NAME_MAX:
        return None  # no part of it can be longer (checked for every job of a big import)
    if whole > PATH_MAX:
        return f"{whole} bytes, more than the {PATH_MAX} a path may have"
    for part in path.parts:
        n = len(os.fsencode(part))
        if n > NAME_MAX:
            return f"a name of {n} bytes, more than the {NAME_MAX} a file name may have"
    return None


def _lengths(job: Job, problem: Report, sizes: dict[str, int]) -> None:
    w = f"jobs.{job.name}"
    checks = [("wrapper_dir", job.wrapper_dir, f"{job.name}.sh"),
              ("log_root", job.log_root, f"{job.name}/events.jsonl")]
    if job.lock is not None:
        checks.append(("lock_dir", job.lock_dir, f"{job.lock.name}.lock"))
    for field, folder, name in checks:
        text = str(folder)
        size = sizes.get(text)
        if size is None:
            size = sizes[text] = len(os.fsencode(text))
        if size + 1 + len(os.fsencode(name)) <= NAME_MAX:
            continue  # no part of it can be longer: no path made (20,000 jobs import)
        path = folder / name
        long = too_long(path)
        if long:
            problem(f"{w}.{field}", f"{path.name} there would be {long}")


def _device(path: Path) -> int | None:
    """The device of the folder, or of its nearest existing parent (it may not exist yet)."""
    for p in (path, *path.parents):
        try:
            return os.stat(p).st_dev
        except OSError:
            continue
    return None


def _queue(job: Job, problem: Report) -> None:
    w = f"jobs.{job.name}.queue"
    q = job.queue
    assert q is not None
    folders = {"inbox": q.inbox, "processing": q.processing, "processed": q.processed,
               "failed": q.failed}
    real = {k: Path(os.path.realpath(v)) for k, v in folders.items()}
    names = list(folders)
    for i, a in enumerate(names):
        for b in names[:i]:
            if folders[a] == folders[b]:
                continue  # the loader reports a literal repeat already
            ra, rb = real[a], real[b]
            if ra == rb:
                problem(f"{w}.{a}", f"is the same folder as {b} once symlinks and '..' are "
                                    f"resolved ({ra}): runs would claim the same files again")
            elif rb in ra.parents or ra in rb.parents:
                inner, outer = (a, b) if rb in ra.parents else (b, a)
                problem(f"{w}.{a}", f"{inner} is inside {outer} ({real[inner]} in "
                                    f"{real[outer]}): keep the queue folders side by side")
    dev_in = _device(real["inbox"])
    for k in names[1:]:
        d = _device(real[k])
        if dev_in is not None and d is not None and d != dev_in:
            problem(f"{w}.{k}", f"is on another file system than inbox ({real[k]} vs "
                                f"{real['inbox']}): moving a claim would copy and delete, so "
                                "two runs could process one file; keep them on one file system")
