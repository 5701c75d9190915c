"""templates/runtime/90-fscheck.sh: the wrapper's same-file-system check, sourced and run directly."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

import pytest

from tests import wrapper_kit
from tests.helpers import write_executable
from tests.test_wrapper_portability import FORBIDDEN, code_lines

SCRIPT = resources.files("schedgen.templates").joinpath("runtime/90-fscheck.sh")


def same_fs(*dirs: Path | str, path: str | None = None,
            ostype: str | None = None) -> subprocess.CompletedProcess[str]:
    body = f'set -u\n. "{SCRIPT}"\nsg_same_fs "$@"\nrc=$?\nprintf "%s" "$sg_fs_msg"\nexit $rc\n'
    env = {**os.environ, "PATH": wrapper_kit.shell_path()}
    if path is not None:
        env["PATH"] = path
    cmd = [wrapper_kit.BASH, "-c", (f"OSTYPE={ostype}; " if ostype else "") + body, "fscheck",
           *map(str, dirs)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=30)


# A BSD stat (macOS): no -c; `-f %d` prints the device. Paths under a folder named
# "other-fs" report another device, so the "differs" branch runs on any machine.
BSD_STAT = f"""#!{sys.executable} -S
import os, sys
args = sys.argv[1:]
follow = args[:1] == ["-L"]   # stat(2), not lstat(2)
args = args[1:] if follow else args
if not args or args[0] != "-f":
    sys.stderr.write("stat: illegal option -- " + (args[0][1:] if args else "?") + "\\n")
    sys.exit(1)
files = [a for a in args[2:] if a != "--"]
for f in files:
    dev = (os.stat(f) if follow else os.lstat(f)).st_dev
    print(dev + 1 if "other-fs" in (os.path.realpath(f) if follow else f) else dev)
"""


@pytest.mark.macos
def test_one_file_system_passes_also_for_folders_not_made_yet(tmp_path: Path) -> None:
    (tmp_path / "q" / "inbox").mkdir(parents=True)
    r = same_fs(tmp_path / "q/inbox", tmp_path / "q/processing", tmp_path / "q/processed/x")
    assert r.returncode == 0 and r.stdout == ""


def test_bsd_stat_reports_the_folder_on_another_device(tmp_path: Path) -> None:
    bindir = tmp_path / "bsd-bin"
    write_executable(bindir / "stat", BSD_STAT)
    (tmp_path / "other-fs").mkdir()
    r = same_fs(tmp_path / "inbox", tmp_path / "processing", tmp_path / "other-fs" / "processed",
                path=f"{bindir}:/usr/bin:/bin", ostype="darwin22")
    assert r.returncode == 1
    assert r.stdout.startswith(f"{tmp_path}/other-fs/processed is on another file system than "
                               f"{tmp_path}/inbox (device ")
    r = same_fs(tmp_path / "inbox", tmp_path / "processing",
                path=f"{bindir}:/usr/bin:/bin", ostype="darwin22")
    assert r.returncode == 0


def test_a_stat_of_the_other_flavour_than_ostype_says_still_works(tmp_path: Path) -> None:
    if subprocess.run(["stat", "-c", "%d", "/"], capture_output=True).returncode != 0:
        pytest.skip("needs GNU stat")
    # GNU coreutils first on a Mac's PATH: OSTYPE says darwin, stat is GNU's
    r = same_fs(tmp_path, tmp_path / "x", ostype="darwin22")
    assert r.returncode == 0, r.stdout
    # and a BSD stat where OSTYPE says linux
    bindir = tmp_path / "bsd-bin"
    write_executable(bindir / "stat", BSD_STAT)
    (tmp_path / "other-fs").mkdir()
    r = same_fs(tmp_path, tmp_path / "other-fs", path=f"{bindir}:/usr/bin:/bin",
                ostype="linux-gnu")
    assert r.returncode == 1 and "is on another file system" in r.stdout


@pytest.mark.macos
def test_real_second_file_system_is_caught(tmp_path: Path) -> None:
    others = [Path(p) for p in ("/dev/shm", "/run", "/var/tmp", "/tmp")
              if Path(p).is_dir() and os.stat(p).st_dev != os.stat(tmp_path).st_dev]
    if not others:
        pytest.skip("no second file system here")
    r = same_fs(tmp_path, others[0])
    assert r.returncode == 1 and f"{others[0]} is on another file system" in r.stdout


def second_fs(tmp_path: Path) -> Path:
    for p in ("/dev/shm", "/run", "/var/tmp", "/tmp"):
        if Path(p).is_dir() and os.access(p, os.W_OK) and \
                os.stat(p).st_dev != os.stat(tmp_path).st_dev:
            return Path(p)
    pytest.skip("no second writable file system here")


@pytest.mark.macos
def test_a_queue_folder_that_is_a_symlink_counts_where_it_points(tmp_path: Path) -> None:
    # processing/ a link (on this file system) to a folder on another: the claim's mv
    # would copy. And the other way round: a link on another file system to a folder on
    # this one is this one.
    other = Path(tempfile.mkdtemp(dir=second_fs(tmp_path)))
    try:
        (tmp_path / "inbox").mkdir()
        (other / "processing").mkdir()
        (tmp_path / "processing").symlink_to(other / "processing")
        r = same_fs(tmp_path / "inbox", tmp_path / "processing")
        assert r.returncode == 1 and f"{tmp_path}/processing is on another file system" in r.stdout
        (other / "inbox").symlink_to(tmp_path / "inbox")
        (tmp_path / "processed").mkdir()
        r = same_fs(other / "inbox", tmp_path / "processed")
        assert r.returncode == 0, r.stdout
    finally:
        shutil.rmtree(other)


def test_bsd_stat_is_asked_where_a_symlinked_folder_points(tmp_path: Path) -> None:
    bindir = tmp_path / "bsd-bin"
    write_executable(bindir / "stat", BSD_STAT)
    (tmp_path / "other-fs" / "p").mkdir(parents=True)
    (tmp_path / "processing").symlink_to(tmp_path / "other-fs" / "p")
    r = same_fs(tmp_path / "inbox", tmp_path / "processing",
                path=f"{bindir}:/usr/bin:/bin", ostype="darwin22")
    assert r.returncode == 1 and "processing is on another file system" in r.stdout


@pytest.mark.macos
def test_unreadable_devices_are_reported_not_guessed(tmp_path: Path) -> None:
    bindir = tmp_path / "broken-bin"
    write_executable(bindir / "stat", "#!/bin/sh\necho 'weird output'\n")
    r = same_fs(tmp_path, tmp_path / "x", path=f"{bindir}:/usr/bin:/bin")
    assert r.returncode == 2 and "cannot read the device numbers" in r.stdout


def test_fscheck_is_shellcheck_clean_and_bash_3_2_plain() -> None:
    text = SCRIPT.read_text(encoding="utf-8")
    assert "{{" not in text and "{%" not in text  # no jinja: it is plain bash
    for i, line in code_lines(text):
        for pattern, why in FORBIDDEN:
            if "stat -c" in why:
                continue  # used on purpose, with the BSD spelling as the other flavour
            assert not re.search(pattern, line), f"line {i}: {why}: {line}"
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed")
    r = subprocess.run(["shellcheck", "-s", "bash", "-S", "style", str(SCRIPT)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
