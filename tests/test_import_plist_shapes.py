"""Plists as people have them: launchd loads files Python's XML parser refuses, resolves a
relative WorkingDirectory from /, and runs a UserName job as that user."""

from __future__ import annotations

import plistlib
from pathlib import Path

import pytest

from schedgen.commands.import_jobs import run_import
from schedgen.config.load import loads
from schedgen.importers.cron_system import current_user
from schedgen.importers.document import Note
from schedgen.targets.launchd.importer import plist_job
from schedgen.targets.launchd.plist_read import read_plist

BODY = b"""<plist version="1.0">
<dict>
  <key>Label</key><string>com.me.daily</string>
  <key>ProgramArguments</key><array><string>/Users/me/bin/daily</string></array>
  <key>StartCalendarInterval</key><dict><key>Hour</key><integer>9</integer>
  <key>Minute</key><integer>0</integer></dict>
</dict>
</plist>
"""
DECL = b'<?xml version="1.0" encoding="UTF-8"?>\n'
DOCTYPE = (b'<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
           b'"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n')
UNQUOTED = (b'<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
            b'http://www.apple.com/DTDs/PropertyList-1.0.dtd>\n')
OLD_APPLE = (b'<!DOCTYPE plist PUBLIC "-//Apple Computer//DTD PLIST 1.0//EN" '
             b'"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n')

LENIENT = {
    "comment before the declaration": (b"<!-- from a blog post -->\n" + DECL + DOCTYPE + BODY,
                                       "a comment before <?xml ...?>"),
    "blank lines before the declaration": (b"\n\n" + DECL + DOCTYPE + BODY,
                                           "blank space before <?xml ...?>"),
    "byte-order mark": (b"\xef\xbb\xbf" + DECL + DOCTYPE + BODY, None),
    "unquoted system id": (DECL + UNQUOTED + BODY, "a DOCTYPE Python's XML parser refuses"),
    "no declaration, no DOCTYPE": (BODY, None),
    "old Apple Computer DOCTYPE": (DECL + OLD_APPLE + BODY, None),
}


@pytest.mark.parametrize("case", LENIENT)
def test_plists_launchd_loads_are_read(case: str) -> None:
    data, repair = LENIENT[case]
    read = read_plist(data)
    assert read.plist is not None, read.error
    assert read.plist["Label"] == "com.me.daily"
    if repair:
        assert any(r.startswith(repair) for r in read.repairs), read.repairs
    notes: list[Note] = []
    found = plist_job("x.plist", data, notes)
    assert found is not None and found.keys["schedule"] == "0 9 * * *"
    assert not any("skipped" in n.message for n in notes)


@pytest.mark.parametrize(("data", "cause"), [
    (b"", "the file is empty"),
    (b"key = value\n", "it is neither XML nor a binary plist"),
    (DECL + b"<plist><dict><key>a</key></plist>\n", "mismatched tag: line 2, column "),
    (b"bplist00\x00\x01", "a damaged binary plist"),
])
def test_an_unreadable_plist_names_its_cause(data: bytes, cause: str) -> None:
    notes: list[Note] = []
    assert plist_job("bad.plist", data, notes) is None
    assert len(notes) == 1 and notes[0].message.startswith(f"skipped: not a readable plist: {cause}")


def agent(tmp_path: Path, **keys) -> Path:
    plist = {"Label": "com.me.job", "ProgramArguments": ["/usr/bin/true"],
             "StartInterval": 600, **keys}
    path = tmp_path / "com.me.job.plist"
    path.write_bytes(plistlib.dumps(plist))
    return path


@pytest.mark.parametrize(("given", "absolute", "literal"), [
    ("logs", "/logs", False), ("./a/../b", "/b", False), ("~/work", "/~/work", True),
    ("$HOME", "/$HOME", True), ("/Users/me", "/Users/me", False)])
def test_relative_working_directory_is_resolved_from_root(tmp_path: Path, given: str,
                                                          absolute: str, literal: bool) -> None:
    result = run_import("launchd", agent(tmp_path, WorkingDirectory=given), None, False)
    job = loads(result.text, tmp_path / "jobs.toml").jobs[0]
    assert job.working_dir == Path(absolute)
    notes = [n.message for n in result.notes if "WorkingDirectory" in n.message]
    assert bool(notes) is (given != absolute)
    assert any("expands neither ~ nor $VARS" in n for n in notes) is literal


def test_username_of_someone_else_is_skipped_and_yours_noted(tmp_path: Path) -> None:
    me = current_user()
    notes: list[Note] = []
    data = plistlib.dumps({"Label": "a.b.c", "ProgramArguments": ["/usr/bin/true"],
                           "StartInterval": 60, "UserName": "nobody-here"})
    assert plist_job("a.plist", data, notes, user="me") is None
    assert notes[0].message == ("skipped: runs as user 'nobody-here' (UserName); schedgen "
                                "installs jobs for you (me) only")
    result = run_import("launchd", agent(tmp_path, UserName=me), None, False)
    assert result.jobs == ("job",)
    assert any(n.message == f"UserName {me} is you: imported as one of your jobs"
               for n in result.notes)


def test_a_placeholder_in_an_argument_is_skipped() -> None:
    notes: list[Note] = []
    data = plistlib.dumps({"Label": "a.b.c", "ProgramArguments": ["/bin/echo", "{run_id}"],
                           "StartInterval": 60})
    assert plist_job("a.plist", data, notes) is None
    assert notes[0].message == ("skipped: an argument holds {run_id}, which schedgen would "
                                "replace at run time")
