"""Splicing schedgen's block into a crontab without touching a foreign byte."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from schedgen.errors import EXIT_INPUT
from schedgen.targets.cron import crontab
from tests.fakes import FakeCrontab

FOREIGN = ('# m h dom mon dow command\nSHELL=/bin/bash\nMAILTO="ops@example.com"\n\n'
           '0 3 * * 1-5 echo "100%" \\% done\n   */10   *  * * *     /usr/local/bin/odd  x  \n'
           '\t@reboot /opt/thing --flag\n5 4 * * sun last-line-without-newline')
BLOCK = ("# BEGIN schedgen namespace=default -- x\n* * * * * /w.sh --cron\n"
         "# END schedgen namespace=default\n")
OTHER = ("# BEGIN schedgen namespace=other -- x\n1 1 * * * /o.sh --cron\n"
         "# END schedgen namespace=other\n")


def test_block_is_appended_after_a_terminated_last_line() -> None:
    out = crontab.splice(FOREIGN, "default", BLOCK)
    assert out == FOREIGN + "\n" + BLOCK


def test_block_goes_straight_after_a_table_that_ends_with_a_newline() -> None:
    assert crontab.splice("A=1\n", "default", BLOCK) == "A=1\n" + BLOCK
    assert crontab.splice("", "default", BLOCK) == BLOCK


def test_replace_and_remove_keep_the_bytes_around_the_block() -> None:
    before, after = "x=1\n  # indented comment\n", "\n0 0 * * * tail \\%\n"
    table = before + BLOCK + after
    new = BLOCK.replace("* * * * *", "*/5 * * * *")
    assert crontab.splice(table, "default", new) == before + new + after
    assert crontab.splice(table, "default", None) == before + after


def test_other_namespaces_are_not_ours() -> None:
    table = OTHER + "x=1\n"
    assert crontab.block(table, "default") is None
    assert crontab.splice(table, "default", BLOCK) == OTHER + "x=1\n" + BLOCK
    assert crontab.splice(OTHER + BLOCK, "default", None) == OTHER


def test_end_line_without_newline_at_the_end_of_the_table() -> None:
    table = "x=1\n" + BLOCK.rstrip("\n")
    assert crontab.block(table, "default") == BLOCK.rstrip("\n")
    assert crontab.splice(table, "default", BLOCK) == "x=1\n" + BLOCK
    assert crontab.splice(table, "default", None) == "x=1\n"


def test_unchanged_block_gives_back_the_same_table() -> None:
    table = FOREIGN + "\n" + BLOCK + "# after\n"
    assert crontab.splice(table, "default", BLOCK) == table


@pytest.mark.parametrize("table, words", [
    ("# BEGIN schedgen namespace=default -- x\n* * * * * y\n", "BEGIN line (line 1) but no END"),
    ("x=1\n# END schedgen namespace=default\n", "END line (line 2) but no BEGIN"),
    (BLOCK + BLOCK, "more than once (marker lines 1, 3, 4, 6)"),
    ("# END schedgen namespace=default\n# BEGIN schedgen namespace=default\n", "before its BEGIN"),
])
def test_damaged_block_is_refused(table: str, words: str) -> None:
    with pytest.raises(crontab.DamagedBlock) as exc:
        crontab.splice(table, "default", BLOCK)
    assert words in str(exc.value)
    assert "nothing was changed" in str(exc.value)
    assert exc.value.exit_code == EXIT_INPUT


def test_another_namespace_damaged_does_not_stop_ours() -> None:
    table = "# BEGIN schedgen namespace=other -- x\n"
    assert crontab.splice(table, "default", BLOCK) == table + BLOCK


def test_read_no_crontab_is_an_empty_table(fake_crontab: FakeCrontab) -> None:
    assert crontab.read() == crontab.Table("", False)


def test_read_write_round_trip_keeps_non_utf8_bytes(fake_crontab: FakeCrontab) -> None:
    raw = b"# caf\xc3\xa9 latin-1 \xe9 byte\nA=1\n"
    fake_crontab.set(raw)
    table = crontab.read()
    from schedgen.machine.ops import Ops

    crontab.write(Ops(), crontab.splice(table.text, "default", BLOCK))
    assert fake_crontab.read() == raw + BLOCK.encode()
    crontab.write(Ops(), crontab.splice(crontab.read().text, "default", None))
    assert fake_crontab.read() == raw


def test_writing_an_empty_table_removes_the_crontab(fake_crontab: FakeCrontab) -> None:
    from schedgen.machine.ops import Ops

    fake_crontab.set(BLOCK)
    crontab.write(Ops(), "")
    assert fake_crontab.read() is None
    assert fake_crontab.writes() == [["-r"]]


def test_the_sweep_leaves_the_tables_of_live_applies_whatever_their_age(tmp_path: Path) -> None:
    # An apply whose clock is ahead (a test under faketime, a clock stepped forward) took
    # another apply's fresh table for an old one and removed it under crontab(1).
    gone = subprocess.Popen(["true"])
    gone.wait()
    tmp_path = tmp_path / "schedgen-tmp"
    tmp_path.mkdir()
    old = 1_000_000_000
    names = {f"crontab.{os.getpid()}.a1b2c3d4.tmp": True,  # ours, running: kept
             f"crontab.{gone.pid}.b1b2c3d4.tmp": False,    # its apply is gone: removed
             "crontab.c1b2c3d4.tmp": False,                # an older schedgen's: by age
             f"crontab.{gone.pid}.d1b2c3d4.tmp.keep": True,  # not a temp table
             "notes.txt": True}
    for name in names:
        (tmp_path / name).write_text("x")
        os.utime(tmp_path / name, (old, old))
    fresh = tmp_path / f"crontab.{gone.pid}.e1b2c3d4.tmp"
    fresh.write_text("x")  # young: kept, whoever made it
    crontab._sweep(tmp_path)
    assert {p.name for p in tmp_path.iterdir()} == {n for n, kept in names.items() if kept} | {
        fresh.name}
