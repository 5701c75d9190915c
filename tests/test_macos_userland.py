"""The macOS leg of the wrapper tests: bash 3.2 and the BSD userland really are what runs,
each BSD shim refuses GNU-only usage as its BSD tool does, and a bash-4 construct planted
in the runtime makes a wrapper behaviour test fail there (while bash 5 runs it fine)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from schedgen.render import artifacts
from tests import wrapper_kit
from tests.bsd_userland import ABSENT, NO_BASH32, bash32, bsd_bin
from tests.wrapper_kit import fill_inbox, make_job, queue_fields

pytestmark = pytest.mark.skipif(bash32() is None, reason=NO_BASH32)


@pytest.fixture(scope="module")
def bsd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bsd_bin(tmp_path_factory.mktemp("bsd"))


def sh(bsd: Path, cwd: Path, line: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bsd / "bash"), "-c", line], cwd=cwd, capture_output=True,
                          text=True, env={"PATH": str(bsd), "LC_ALL": "C"}, timeout=30)


# (command line, exit status, first line of stderr): GNU-only usage, refused the BSD way.
REFUSED = [
    ("stat -c %s f", 1, "stat: illegal option -- c"),
    ("stat --format=%s f", 1, "stat: illegal option -- -"),
    ("date -d yesterday", 1, "date: illegal option -- d"),
    ("date --date=@0", 1, "date: illegal option -- -"),
    ("mv -T f g", 64, "mv: illegal option -- T"),
    ("mv -t d f", 64, "mv: illegal option -- t"),
    ("find . -printf %p", 1, "find: -printf: unknown primary or operator"),
    ("find . -readable", 1, "find: -readable: unknown primary or operator"),
    ("find -name f", 1, "find: illegal option -- n"),
    # -i takes the next word as the backup suffix: the script is then "f", the file none
    ("sed -i s/a/b/ f", 1, "sed: -I or -i may not be used with stdin"),
    ("sed -z s/a/b/ f", 1, "sed: illegal option -- z"),
    ("readlink -f f", 1, "readlink: illegal option -- f"),
    ("touch -d 2020-01-01 f", 1, "touch: out of range or illegal time specification"),
    ("ls --color f", 1, "ls: illegal option -- -"),
    ("rm --one-file-system f", 64, "rm: illegal option -- -"),
    ("mkdir --parents d", 64, "mkdir: illegal option -- -"),
    ("tail -n +x f", 1, "tail: illegal offset -- +x"),
    ("sleep 1m", 1, "usage: sleep seconds"),
    ("ln -T f g", 1, "ln: illegal option -- T"),
]


@pytest.mark.parametrize(("line", "status", "says"), REFUSED, ids=[r[0] for r in REFUSED])
def test_gnu_only_usage_is_refused_as_bsd_refuses_it(bsd: Path, tmp_path: Path, line: str,
                                                     status: int, says: str) -> None:
    (tmp_path / "f").write_text("a\n")
    r = sh(bsd, tmp_path, line)
    assert r.returncode == status and r.stderr.splitlines()[0].startswith(says), r.stderr
    assert (tmp_path / "f").read_text() == "a\n"   # nothing was done
    if "illegal option" in says:
        assert r.stderr.splitlines()[1].startswith("usage: ")


def test_the_bsd_spellings_work(bsd: Path, tmp_path: Path) -> None:
    (tmp_path / "f").write_text("hello\n")
    size = sh(bsd, tmp_path, "stat -L -f '%z %d' f").stdout.split()
    st = os.stat(tmp_path / "f")
    assert size == [str(st.st_size), str(st.st_dev)]
    r = sh(bsd, tmp_path, "date -j -f '%Y%m%d%H%M%S' 20270201000000 '+%Y-%m-%d %H:%M'")
    assert r.stdout == "2027-02-01 00:00\n"
    assert sh(bsd, tmp_path, "date -u -r 86400 +%F").stdout == "1970-01-02\n"
    assert sh(bsd, tmp_path, "date +%sN | tr -d 0-9").stdout.strip() == "N"   # no %N on BSD
    r = sh(bsd, tmp_path, "sed -i '' s/hello/bye/ f && cat f")
    assert r.stdout == "bye\n" and not list(tmp_path.glob("f?*"))
    r = sh(bsd, tmp_path, "find . -maxdepth 1 -type f -name f -print")
    assert r.stdout == "./f\n"
    r = sh(bsd, tmp_path, "touch -d 2020-01-01T00:00:00 f && stat -f %m f")
    assert r.returncode == 0 and int(r.stdout) < 1_600_000_000


def test_mv_n_checks_then_renames_and_leaves_a_taken_name_alone(bsd: Path, tmp_path: Path) -> None:
    (tmp_path / "a").write_text("a")
    (tmp_path / "b").write_text("b")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "b").write_text("taken")
    r = sh(bsd, tmp_path, "mv -n a b d/")
    # BSD mv -n: status 0 for a target left alone (GNU 9.x says 1)
    assert r.returncode == 0 and r.stderr == ""
    assert (tmp_path / "d" / "a").read_text() == "a" and (tmp_path / "d" / "b").read_text() == "taken"
    assert (tmp_path / "b").exists() and not (tmp_path / "a").exists()
    r = sh(bsd, tmp_path, "mv -n gone d/")
    assert r.returncode == 1 and r.stderr == "mv: rename gone to d/gone: No such file or directory\n"


def test_what_macos_lacks_is_absent_and_bash_is_3_2(bsd: Path, tmp_path: Path) -> None:
    for tool in ("flock", "timeout", "setsid"):
        assert tool in ABSENT
        assert sh(bsd, tmp_path, f"command -v {tool}").returncode == 1, tool
    assert sh(bsd, tmp_path, "command -v perl mv date find").stdout.count("\n") == 4
    assert sh(bsd, tmp_path, 'echo "$BASH_VERSION"').stdout.startswith("3.2.")
    assert sh(bsd, tmp_path, "bash -c 'echo $BASH_VERSION'").stdout.startswith("3.2.")


@pytest.mark.macos
def test_the_macos_leg_runs_the_wrapper_and_its_command_under_bash_3_2(
        tmp_path: Path, userland: str) -> None:
    w = make_job(tmp_path, command='echo "$BASH_VERSION"; command -v flock || echo no-flock')
    r = w.run()
    assert r.returncode == 0, r.stderr
    [run] = w.run_dirs()
    out = (run / "stdout.log").read_text()
    if userland == "macos":
        assert w.argv()[0] == str(bash32())
        assert out.startswith("3.2.") and "no-flock" in out
    else:
        assert not out.startswith("3.2.")


# -- a bash-4 construct planted in the runtime -----------------------------------------

# Each keeps the runtime's behaviour under bash 4+ and is one an engineer could write:
# (what is replaced, what replaces it).
PLANTS = {
    "${x,,}": ("  sg_init\n", "  sg_init\n  sg_job=${sg_job,,}   # job names are lower case\n"),
    "mapfile": ("""  IFS=' ' read -r c i 2>/dev/null <"$sg_attempts/$2"\n""",
                """  mapfile -t sg_lines <"$sg_attempts/$2" 2>/dev/null\n"""
                """  IFS=' ' read -r c i <<<"${sg_lines[0]-}"\n"""),
    "declare -A": ("  sg_init\n", "  sg_init\n  declare -A sg_seen\n  sg_seen[$sg_job]=1 sg_seen[lock]=1\n"
                   '  [ "${#sg_seen[@]}" = 2 ] || exit 70\n'),
}


def _queue_scenario(root: Path) -> None:
    """A queue run's core: a good item is processed, a bad one goes back and, at its
    second failed attempt, to failed/ (the counts are read back each run)."""
    q = root / "q"
    fill_inbox(q / "inbox", ["a-good.json", "b-bad.json"])   # a failure ends the batch
    w = make_job(root, command=["bash", "-c", '[ "${1##*/}" = a-good.json ]', "_", "{item}"],
                 lock=False, queue=queue_fields(root, pattern="*.json", max_attempts=2, batch=0))
    codes = [w.run().returncode for _ in range(2)]
    assert codes == [1, 1], [codes, w.run().stderr]
    assert _names(q / "processed") == ["a-good.json"]
    assert _names(q / "failed") == ["b-bad.json"]


def _names(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir()) if d.is_dir() else []


@pytest.mark.parametrize("construct", PLANTS)
def test_a_bash_4_construct_in_the_runtime_fails_the_macos_leg(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch, construct: str) -> None:
    from tests.plugin import macos_userland

    old, new = PLANTS[construct]
    text = artifacts.runtime_text()
    assert text.count(old) == 1, construct
    planted = text.replace(old, new)
    monkeypatch.setattr(wrapper_kit, "runtime_text", lambda: planted)
    _queue_scenario(tmp_path / "bash5")          # bash 5: the plant changes nothing
    macos_userland(tmp_path_factory, monkeypatch)
    with pytest.raises(AssertionError):
        _queue_scenario(tmp_path / "bash3.2")


def test_the_same_scenario_passes_under_bash_3_2_without_a_plant(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.plugin import macos_userland

    macos_userland(tmp_path_factory, monkeypatch)
    _queue_scenario(tmp_path)


def test_a_gnu_only_option_the_runtime_hides_is_still_caught(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """GNU find's -readable in the rotation's find: BSD find refuses it, the runtime sends
    find's errors to /dev/null and the run ends well, only never rotating. The shims' note
    of the refusal is what fails the macOS leg (tests/plugin.py reads it after each test)."""
    from tests.plugin import macos_userland

    old = "-maxdepth 1 -type f \\( -name events.jsonl"
    text = artifacts.runtime_text()
    assert text.count(old) == 1
    planted = text.replace(old, "-maxdepth 1 -type f -readable \\( -name events.jsonl")
    monkeypatch.setattr(wrapper_kit, "runtime_text", lambda: planted)
    macos_userland(tmp_path_factory, monkeypatch)
    log = tmp_path / "refused"
    monkeypatch.setenv("BSD_SHIM_LOG", str(log))
    w = make_job(tmp_path, command=["true"], logs={"max_size": "1KB"})
    assert w.run().returncode == 0                     # the run does not notice
    [line] = log.read_text().splitlines()
    assert line.startswith("find ") and "-readable" in line
