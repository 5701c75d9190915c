"""The job file's own part: finding the runtime (through a link, cut short, missing), the
caller's shell options, and the notify part a run keeps."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from schedgen.render.artifacts import notify_path, runtime_path, runtime_text, wrapper
from tests import wrapper_kit
from tests.wrapper_kit import Wrapped, fill_inbox, make_job, queue_fields, wait_for

# The job file as installed, linked, cut short and standalone (the runtime inlined):
# all of them also under bash 3.2 and the BSD userland (some 2 s).
pytestmark = pytest.mark.macos


def test_a_job_file_called_through_a_link_finds_its_runtime(tmp_path: Path) -> None:
    # A link from ~/bin: the runtime had been looked for beside the link (78, "run
    # schedgen apply", which could not help).
    w = make_job(tmp_path, command=["true"])
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "job").symlink_to(w.path)
    (bindir / "rel").symlink_to(Path("..") / w.path.relative_to(tmp_path))
    for link in ("job", "rel"):
        r = _run([wrapper_kit.BASH, str(bindir / link)], w, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    r = _run([wrapper_kit.BASH, "rel"], w, cwd=bindir)         # no slash in the name it was called by
    assert r.returncode == 0, r.stderr
    assert len(w.run_dirs()) == 3


@pytest.mark.parametrize("damage", ["empty", "cut", "cut-queue", "folder"])
def test_a_runtime_cut_short_or_not_a_file_is_exit_78(tmp_path: Path, damage: str) -> None:
    # It had given 127 (sg_main: command not found), or, cut in its queue part, an
    # "empty" run that exited 0 with items waiting.
    fields = {"queue": queue_fields(tmp_path)} if damage == "cut-queue" else {}
    w = make_job(tmp_path, command=["true", "{item}"] if fields else ["true"], **fields)
    fill_inbox(tmp_path / "q" / "inbox", ["a.json"])
    rt = runtime_path(w.job, w.config)
    text = runtime_text()
    if damage == "empty":
        rt.write_text("")
    elif damage == "folder":
        rt.unlink()
        rt.mkdir()
    else:
        # Cut short in the part a plain run reads (before the cut), or in the queue's.
        at = len(text) - 2000 if damage == "cut-queue" else text.index("# --- 80-cut") // 2
        cut = text.rfind("\n", 0, at)
        rt.write_text(text[:cut + 1])
    r = w.run()
    assert r.returncode == 78, r.stderr
    assert "is missing or damaged; run schedgen apply" in r.stderr
    assert not w.run_dirs() and not w.events()
    if fields:
        assert [p.name for p in (tmp_path / "q" / "inbox").iterdir()] == ["a.json"]


@pytest.mark.parametrize("env", [{"SHELLOPTS": "errexit"}, {"SHELLOPTS": "noclobber"},
                                 {"BASHOPTS": "dotglob"}, {"BASHOPTS": "failglob"},
                                 {"BASHOPTS": "nullglob"}, {"BASH_COMPAT": "31"}])
def test_the_callers_shell_options_do_not_reach_the_runtime(tmp_path: Path,
                                                             env: dict[str, str]) -> None:
    # (systemd units and `schedgen run` pass on what the session exported): errexit had
    # stranded the item in processing/, dotglob claimed a hidden file, failglob and
    # nullglob ended the run.
    q = tmp_path / "q"
    fill_inbox(q / "inbox", ["a.json", ".upload.json"])
    w = make_job(tmp_path, command=["sh", "-c", "exit 1"], queue=queue_fields(tmp_path))
    for _ in range(2):
        r = w.run(env=env)
        assert r.returncode == 1, r.stderr
    assert sorted(p.name for p in (q / "inbox").iterdir()) == [".upload.json", "a.json"]
    assert not [p for p in (q / "processing").iterdir() if not p.name.startswith(".")]
    assert [e["outcome"] for e in w.events("finish")] == ["failed", "failed"]


@pytest.mark.parametrize("how", ["--posix", "POSIXLY_CORRECT"])
def test_a_standalone_job_file_runs_in_posix_mode(tmp_path: Path, how: str) -> None:
    # (macOS's `sh job.sh` is bash in POSIX mode): the inlined runtime's `return` at the
    # top level had ended it with 2, silently, before anything ran.
    w = make_job(tmp_path, command=["true"])
    alone = tmp_path / "alone.sh"
    alone.write_text(wrapper(w.job, w.config, standalone=True))
    argv = [wrapper_kit.BASH, "--posix", str(alone)] if how == "--posix" else [wrapper_kit.BASH, str(alone)]
    r = _run(argv, w, env={"POSIXLY_CORRECT": "1"} if how != "--posix" else {})
    assert r.returncode == 0, r.stderr
    assert [m["outcome"] for m in w.manifests()] == ["ok"]


def test_a_run_keeps_the_notify_part_it_started_with(tmp_path: Path) -> None:
    # It had been read again as the run ended: removed meanwhile (an apply, an uninstall),
    # the failure notice was lost; replaced, the run mixed old and new code.
    out = tmp_path / "notified"
    started = tmp_path / "started"
    w = make_job(tmp_path, command=f"touch {started}; sleep 1; exit 3",
                 notify={"command": ["sh", "-c", f"echo sent >>{out}"], "on": ["failure"]})
    nf = notify_path(w.job, w.config)
    p = w.popen()
    wait_for(started.exists, what="the command to start")
    nf.unlink()
    p.communicate(timeout=60)
    assert p.returncode == 3
    # (the file exists a moment before the line is in it)
    wait_for(lambda: out.exists() and out.read_text() == "sent\n", what="the failure notice")


def _run(argv: list[str], w: Wrapped, cwd: Path | None = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=w.env(env), cwd=cwd, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("how", ["stdin", "-c"])
def test_a_standalone_job_file_read_from_stdin_writes_its_metrics_file(
        tmp_path: Path, how: str) -> None:
    # (`ssh host bash -s < job.sh`): $0 is then the shell, not the job file; the check
    # that the job file is still there (a job removed while it ran) had found no file and
    # left the metrics file unwritten, silently, on every run.
    metrics = tmp_path / "node-exporter"
    w = make_job(tmp_path, command=["true"], metrics_dir=str(metrics))
    alone = wrapper(w.job, w.config, standalone=True)
    argv = ["bash", "-s"] if how == "stdin" else ["bash", "-c", alone]  # bash from PATH
    r = subprocess.run(argv, executable=wrapper_kit.BASH, input=alone if how == "stdin" else None,
                       env=w.env(), cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert [m["outcome"] for m in w.manifests()] == ["ok"]
    assert 'job="job"' in (metrics / "schedgen_default_job.prom").read_text()
