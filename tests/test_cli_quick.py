"""apply, diff and status without typer: the same options, output and exit codes."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import typer.main

from schedgen import cli, quick
from tests.fakes import FakeCrontab
from tests.helpers import write_config

JOBS = """
[defaults]
targets = ["cron"]

[jobs.alpha]
command = ["echo", "alpha"]
schedule = "*/5 * * * *"

[jobs.beta]
command = "echo beta \\u001b[31mred"
schedule = "@hourly"
"""


def _click_command(name: str) -> typer.main.click.Command:  # type: ignore[name-defined]
    group = typer.main.get_command(cli.app)
    return group.commands[name]  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize("name", sorted(quick.OPTIONS))
def test_each_option_read_without_typer_is_the_typer_commands_own(name: str) -> None:
    params = {}
    for p in _click_command(name).params:
        for opt in (*p.opts, *getattr(p, "secondary_opts", ())):
            params[opt] = p
    for opt, (dest, takes_value, repeatable) in quick.OPTIONS[name].items():
        p = params[opt]
        assert p.name == dest, opt
        assert getattr(p, "is_flag", False) == (not takes_value), opt
        assert p.multiple == repeatable, opt
    # and every option of the command but --help is known here (else it goes to typer)
    assert set(params) - {"--help"} == set(quick.OPTIONS[name])


@pytest.mark.parametrize("argv", [
    [], ["--help"], ["apply", "--help"], ["diff", "--bogus"], ["apply", "-cjobs.toml"],
    ["apply", "--json=1"], ["apply", "-nv"], ["diff", "-c", "a", "-c", "b"],
    ["diff", "-c", "-x"], ["diff", "-c"], ["diff", "--config="], ["status", "extra"],
    ["apply", "--", "-c", "x"], ["validate"], ["uninstall"], ["status", "--check", "--check"],
])
def test_anything_else_goes_to_typer(argv: list[str]) -> None:
    assert quick.parse(argv) is None


def test_plain_arguments_are_read_as_click_reads_them() -> None:
    assert quick.parse(["apply", "-c", "j.toml", "-n", "--target=cron", "-t", "launchd",
                        "--json"]) == ("apply", {"config": "j.toml", "dry_run": True,
                                                 "target": ["cron", "launchd"],
                                                 "as_json": True})
    assert quick.parse(["diff", "--config=a=b.toml", "-v", "--stat"]) == (
        "diff", {"config": "a=b.toml", "full": True, "stat": True})
    assert quick.parse(["reconcile"]) == ("reconcile", {})


def _run(main: object, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv
    sys.argv = ["schedgen", *args]
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                main()  # type: ignore[operator]
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    finally:
        sys.argv = saved
    return code, out.getvalue(), err.getvalue()


def _same(*args: str) -> tuple[int, str, str]:
    fast, full = _run(quick.main, *args), _run(cli.main, *args)
    assert fast == full, args
    return fast


def test_both_paths_print_and_exit_alike(fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    fake_crontab.set(b"# mine\n0 1 * * * echo mine\n")
    config = str(write_config(tmp_path / "jobs.toml", JOBS))
    for args in (["diff"], ["diff", "--stat"], ["diff", "--json"], ["diff", "-v"],
                 ["apply", "-n"], ["apply", "--dry-run", "--json"], ["status"],
                 ["status", "--check"], ["reconcile", "--json"], ["diff", "-t", "launchd"],
                 ["diff", "-t", "nosuch"]):
        code, out, err = _same(*args, "-c", config)
        assert code in (0, 1, 2, 4), (args, err)
        assert "\x1b" not in out  # styles stripped off a terminal, as click does
    first = _run(quick.main, "apply", "-c", config)
    assert first[0] == 0 and first[1].startswith("create"), first
    for args in (["diff"], ["apply"], ["apply", "--json"], ["status", "--check"],
                 ["status", "--json"]):
        assert _same(*args, "-c", config)[0] == 0, args
    missing = str(tmp_path / "none.toml")
    assert _same("diff", "-c", missing)[0] == 2


def _python(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('typer' in sys.modules, file=sys.stderr))\n"
            f"sys.argv = ['schedgen', *{args!r}]\n"
            "from schedgen.quick import main\nmain()\n")
    return subprocess.Popen([sys.executable, "-c", code], cwd=cwd, env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_an_in_sync_apply_and_diff_never_import_typer(fake_crontab: FakeCrontab,
                                                      tmp_path: Path) -> None:
    config = str(write_config(tmp_path / "jobs.toml", JOBS))
    for args, loaded in ((["apply", "-c", config], "False"), (["diff", "-c", config], "False"),
                         (["status", "--check", "-c", config], "False"),
                         (["diff", "--help"], "True")):
        p = _python(args, tmp_path, fake_crontab.env)
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0 and err.splitlines()[-1] == loaded, (args, err)


def test_a_reader_that_goes_away_ends_it_with_exit_1_and_no_word(fake_crontab: FakeCrontab,
                                                                 tmp_path: Path) -> None:
    config = str(write_config(tmp_path / "jobs.toml", JOBS))
    p = _python(["diff", "-c", config], tmp_path, fake_crontab.env)
    assert p.stdout is not None
    p.stdout.close()  # before it writes: its first write finds no reader
    _, err = p.communicate(timeout=120)
    assert p.returncode == 1 and err.splitlines() == ["False"], err


def _entry(args: list[str], cwd: Path, env: dict[str, str], out: Path) -> tuple[int, str]:
    """`python -m schedgen ARGS` with stdout a file (block-buffered, unlike a terminal)
    and something registered to run at exit, which a fast exit never runs."""
    code = ("import atexit, runpy, sys\n"
            "atexit.register(lambda: print('torn down', file=sys.stderr))\n"
            f"sys.argv = ['schedgen', *{args!r}]\n"
            "runpy.run_module('schedgen', run_name='__main__')\n")
    with out.open("w") as fh:
        r = subprocess.run([sys.executable, "-c", code], cwd=cwd, env={**os.environ, **env},
                           stdout=fh, stderr=subprocess.PIPE, text=True, timeout=120)
    return r.returncode, r.stderr


def test_the_entry_point_leaves_at_once_with_all_output_and_its_status(
        fake_crontab: FakeCrontab, tmp_path: Path) -> None:
    config = str(write_config(tmp_path / "jobs.toml", JOBS))
    out = tmp_path / "out.txt"
    steps = ((["diff", "-c", config], 1), (["apply", "-c", config], 0),
             (["status", "--check", "-c", config], 0), (["diff", "-c", "none.toml"], 2))
    for args, want in steps:
        code, err = _entry(args, tmp_path, fake_crontab.env, out)
        in_process = _run(quick.main, *args)
        assert code == want == in_process[0], (args, err)
        # every line, as the same command in process prints it, and no teardown after it
        if args[0] != "apply":
            assert out.read_text() == in_process[1], args
        assert err == in_process[2], args
        assert "torn down" not in err
    assert out.read_text() == ""  # the missing config: its word went to stderr


def test_the_typer_commands_still_exit_as_python_does(tmp_path: Path) -> None:
    code, err = _entry(["--version"], tmp_path, {}, tmp_path / "out.txt")
    assert code == 0 and err == "torn down\n"


class _Stream(io.StringIO):
    """A pipe's end: not a terminal; what reached the reader, in order, in `seen`."""

    def __init__(self, name: str, seen: list[str], tty: bool = False) -> None:
        super().__init__()
        self.name, self.seen, self.tty, self.sent = name, seen, tty, 0

    def isatty(self) -> bool:
        return self.tty

    def flush(self) -> None:
        text = self.getvalue()[self.sent:]
        if text:
            self.seen.append(f"{self.name}:{text}")
        self.sent += len(text)


def test_lines_to_a_pipe_go_in_blocks_but_never_after_a_later_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    monkeypatch.setattr(sys, "stdout", _Stream("out", seen))
    monkeypatch.setattr(sys, "stderr", _Stream("err", seen))
    quick.echo("created: a")
    quick.echo("created: b")
    assert seen == []  # not a flush a line
    quick.echo("schedgen: it failed", err=True)
    assert seen == ["out:created: a\ncreated: b\n", "err:schedgen: it failed\n"]


def test_lines_to_a_terminal_show_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    monkeypatch.setattr(sys, "stdout", _Stream("out", seen, tty=True))
    quick.echo("created: \x1b[1ma\x1b[0m")
    assert seen == ["out:created: \x1b[1ma\x1b[0m\n"]


def test_a_reader_gone_mid_apply_stops_the_lines_not_the_apply(fake_crontab: FakeCrontab,
                                                               tmp_path: Path) -> None:
    """`apply | head` of many jobs: the lines fill the pipe's buffer mid-apply, after the
    reader left. The apply goes on to its end (cut between two steps, the new job files
    would run on the old schedule), then exits 1 without a word, as a lost reader does."""
    jobs = "".join(f'[jobs.j{i:03d}]\ntargets = ["cron"]\ncommand = ["echo", "{i}"]\n'
                   f'schedule = "*/5 * * * *"\n' for i in range(150))
    config = str(write_config(tmp_path / "jobs.toml", jobs))
    env = {**fake_crontab.env, "PYTHONUNBUFFERED": ""}  # a pipe's lines go in blocks
    for argv in (["-m", "schedgen", "apply", "-c", config],
                 ["-m", "schedgen", "uninstall", "-c", config]):
        p = subprocess.Popen([sys.executable, *argv], cwd=tmp_path,
                             env={**os.environ, **env}, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        assert p.stdout is not None
        p.stdout.close()  # the reader is gone before the first line
        _, err = p.communicate(timeout=120)
        assert (p.returncode, err) == (1, ""), argv
        table = (fake_crontab.read() or b"").decode()
        wrappers = list((tmp_path / "home/.local/share/schedgen/wrappers").glob("j*.sh"))
        if argv[2] == "apply":  # all of it done: every job file and the crontab block
            assert len(wrappers) == 150 and table.count("wrappers/j") == 150
        else:
            assert wrappers == [] and "wrappers/j" not in table


def test_diff_and_apply_under_a_parent_that_ignores_sigchld(fake_crontab: FakeCrontab,
                                                           tmp_path: Path) -> None:
    """SIGCHLD ignored, as some daemons and CI runners start their children: crontab(1)
    is reaped by the kernel at once; its status is read all the same."""
    import signal

    config = str(write_config(tmp_path / "jobs.toml", JOBS))
    for args, want in ((["diff"], 1), (["apply"], 0), (["status", "--check"], 0)):
        done = subprocess.run([sys.executable, "-m", "schedgen", *args, "-c", config],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              preexec_fn=lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN))
        assert done.returncode == want, (args, done.stderr)
    assert b"wrappers/alpha.sh" in (fake_crontab.read() or b"")
