"""A command's arguments come out as written: only a leading `~` or `~/` becomes the home."""

from __future__ import annotations

from pathlib import Path

from schedgen.config.load import loads
from tests.helpers import schedgen, write_config

ARGS = ["~/notes/", "~/backups/notes/", "~", "~/", "x~/y", "~/a//b/./", "~other/x"]


def test_a_trailing_slash_and_every_other_byte_survive_the_home(home: Path) -> None:
    cfg = loads(f'[jobs.sync]\ncommand = ["rsync", "-a", {", ".join(map(repr, ARGS))}]\n'
                'schedule = "@daily"\npath = ["~/bin/", "/usr/bin"]\n'.replace("'", '"'),
                home / "jobs.toml")
    job = cfg.jobs[0]
    h = str(home)
    assert job.command == ("rsync", "-a", f"{h}/notes/", f"{h}/backups/notes/", h, f"{h}/",
                           "x~/y", f"{h}/a//b/./", "~other/x")
    assert job.path[0] == f"{h}/bin/"


def test_the_program_gets_them_byte_for_byte(tmp_path: Path, home: Path) -> None:
    args = ", ".join(f'"{a}"' for a in ARGS)
    config = write_config(tmp_path / "jobs.toml", f"""
[jobs.args]
command = ["/usr/bin/printf", "[%s]\\n", {args}]
schedule = "@daily"
""")
    r = schedgen("run", "args", "-c", str(config))
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    h = str(home)
    for want in (f"[{h}/notes/]", f"[{h}/backups/notes/]", f"[{h}]", f"[{h}/]", "[x~/y]",
                 f"[{h}/a//b/./]", "[~other/x]"):
        assert want in out, out
