"""The docs stay whole: balanced code fences, no duplicated table row or reference key,
no link to a missing file or heading, console examples that print what the commands
print today, and a jobs.toml reference that is what the schema and the defaults say.

Console examples: every ```console block holding a `$ schedgen ...` line is run. A page
is one terminal session: its blocks run in order in one fresh folder (`HOME` inside it,
the folder shown as /tmp/demo, the bundled jobs.toml in it to start with), each block's
commands through one bash with stderr merged into stdout, and each command's output must
be the lines under it (run IDs, times and a run's seconds are compared as a shape; `...`
in a shown line stands for any text). A block marked `<!-- docs-test: file NAME -->`
writes NAME into the folder at that point of the page. A block that cannot run here says
so right above it: `<!-- docs-test: skip (why) -->`. The scheduler programs are fakes, so
an example can never touch the machine: `crontab` keeps its table in a file (a block
marked `file crontab` is the table it starts with), systemctl, loginctl and kubectl
refuse every call, and there is no launchctl (as on Linux).
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.fakes import CRONTAB

REPO = Path(__file__).resolve().parent.parent
SHOWN_AS = "/tmp/demo"  # the folder the transcripts were made in

# Docs written with transcripts of other machines (a real Mac, a cluster, an installed
# crontab, runs under faketime): their console blocks are read, not run.
NOT_RUN = {
    "docs/import-next-schema.md": "transcripts of crontabs, plists and timers of another machine",
    "docs/kubernetes.md": "transcripts against a cluster",
    "docs/systemd.md": "transcripts against a systemd user manager",
    "docs/install.md": "transcripts of applies to a real crontab and launchd",
    "docs/outcomes.md": "transcripts of runs under faketime",
    "docs/wrapper.md": "transcripts of wrapper runs",
    "docs/timezones.md": "transcripts under faketime",
}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
DIRECTIVE = re.compile(r"^<!-- docs-test: (.*?) -->$")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
MARK = "@@docs-test-step@@"
RUN_ID = re.compile(r"\d{8}T\d{6}Z-\d+")
TOOK = re.compile(r"(\(exit \d+), \d+s\)")  # a run's whole seconds: 0 or 1 by chance
WHEN = re.compile(r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) )?\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d)?"
                  r"(?:Z|[+-]\d\d:\d\d)?")


def shape(line: str) -> str:
    """What must match of a printed line: run IDs, times and a run's seconds vary, and
    so do the widths of the columns that hold them (a pid of 4 digits or 6)."""
    line = WHEN.sub("<time>", TOOK.sub(r"\1, <n>s)", RUN_ID.sub("<run id>", line)))
    return re.sub(r"(?<=\S) {2,}", "  ", line)


def matches(want: list[str], got: list[str]) -> bool:
    """Line by line; `...` in a shown line stands for any text within that line (a size
    or a count that changes whenever the runtime does)."""
    if len(want) != len(got):
        return False
    return all(re.fullmatch(".*".join(map(re.escape, w.split("..."))), g) is not None
               for w, g in zip(want, got, strict=True))


def markdown_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return path.name


@dataclass
class Block:
    lang: str
    start: int  # line number of the opening fence, 1-based
    lines: list[str]
    directive: str | None = None


@dataclass
class Doc:
    path: Path
    text: str
    prose: list[tuple[int, str]] = field(default_factory=list)  # (line, text) outside fences
    blocks: list[Block] = field(default_factory=list)
    fences: int = 0


def parse(path: Path, text: str | None = None) -> Doc:
    doc = Doc(path, path.read_text(encoding="utf-8") if text is None else text)
    open_: Block | None = None
    marker = ""
    directive: str | None = None
    for n, line in enumerate(doc.text.splitlines(), 1):
        m = FENCE.match(line)
        if open_ is None:
            if m:
                doc.fences += 1
                marker = m.group(1)
                open_ = Block(m.group(2).strip(), n, [], directive)
                directive = None
                continue
            d = DIRECTIVE.match(line.strip())
            if d:
                directive = d.group(1)
            elif line.strip():
                directive = None
            doc.prose.append((n, line))
        elif m and m.group(1).startswith(marker[0]) and len(m.group(1)) >= len(marker) \
                and not m.group(2).strip():
            doc.fences += 1
            doc.blocks.append(open_)
            open_ = None
        else:
            open_.lines.append(line)
    return doc


# ---- the checks: each returns the problems it found, as "file:line: what" ----------


def check_fences(doc: Doc) -> list[str]:
    if doc.fences % 2:
        return [f"{rel(doc.path)}: {doc.fences} code fences, an odd number: one is never "
                "closed and what follows renders as code"]
    return []


def check_tables(doc: Doc) -> list[str]:
    """A row twice in one table, or two rows for one key (a first cell in `code`)."""
    out: list[str] = []
    table: list[tuple[int, str]] = []
    for n, line in [*doc.prose, (0, "")]:
        if line.lstrip().startswith("|"):
            table.append((n, line.strip()))
            continue
        rows: dict[str, int] = {}
        keys: dict[str, int] = {}
        for rn, row in table[2:]:  # after the header and its rule
            first = re.split(r"(?<!\\)\|", row)[1].strip()
            if row in rows:
                out.append(f"{rel(doc.path)}:{rn}: table row repeats line {rows[row]}: {row[:60]}")
            elif first.startswith("`") and first in keys:
                out.append(f"{rel(doc.path)}:{rn}: {first} has a row already at line "
                           f"{keys[first]}")
            rows.setdefault(row, rn)
            keys.setdefault(first, rn)
        table = []
    return out


def check_toml(doc: Doc) -> list[str]:
    """Every toml example parses: a key given twice in one table is a TOML error."""
    out = []
    for b in doc.blocks:
        if b.lang != "toml":
            continue
        try:
            tomllib.loads("\n".join(b.lines))
        except tomllib.TOMLDecodeError as e:
            out.append(f"{rel(doc.path)}:{b.start}: toml example does not parse: {e}")
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(doc: Doc) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in doc.prose:
        m = re.match(r"^#{1,6} (.*)$", line)
        if not m:
            continue
        s = slug(m.group(1))
        if s in seen:
            seen[s] += 1
            out.add(f"{s}-{seen[s]}")
        else:
            seen[s] = 0
            out.add(s)
    return out


def check_links(doc: Doc) -> list[str]:
    out = []
    for n, line in doc.prose:
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"^[a-z]+:", target):
                continue  # http(s), mailto
            file_part, _, anchor = target.partition("#")
            dest = (doc.path.parent / file_part).resolve() if file_part else doc.path
            if not dest.exists():
                out.append(f"{rel(doc.path)}:{n}: link to a missing file: {target}")
                continue
            if anchor and dest.suffix == ".md" and anchor not in anchors(parse(dest)):
                out.append(f"{rel(doc.path)}:{n}: link to a missing heading: {target}")
    return out


# ---- console examples -------------------------------------------------------------


@dataclass
class Step:
    command: str
    expected: list[str]


def steps(block: Block) -> list[Step]:
    out: list[Step] = []
    lines = iter(block.lines)
    for line in lines:
        if line.startswith("$ "):
            cmd = line[2:]
            while cmd.endswith("\\"):
                cmd = cmd[:-1] + "\n" + next(lines)
            out.append(Step(cmd, []))
        elif out:
            out[-1].expected.append(line)
    return out


def runs_schedgen(block: Block) -> bool:
    return block.lang == "console" and any(s.command.startswith("schedgen")
                                           for s in steps(block))


REFUSE = "#!/bin/sh\necho \"$0: not available in the docs tests\" >&2\nexit 1\n"


@dataclass
class Session:
    """One page's terminal: a folder that its console blocks share, in page order."""

    where: Path

    def __post_init__(self) -> None:
        self.demo = self.where / "demo"
        self.table = self.where / "crontab.table"  # the fake crontab's table
        shutil.rmtree(self.demo, ignore_errors=True)
        self.table.unlink(missing_ok=True)
        (self.demo / "home").mkdir(parents=True)
        shutil.copy(REPO / "jobs.toml", self.demo / "jobs.toml")
        self.fake = self.where / "fakebin"
        self.fake.mkdir(exist_ok=True)
        # No launchctl at all, as on any Linux host (there is none to protect).
        for prog in ("systemctl", "loginctl", "kubectl"):
            (self.fake / prog).write_text(REFUSE)
            (self.fake / prog).chmod(0o755)
        (self.fake / "crontab").write_text(CRONTAB)  # file-backed, behaving like Debian's
        (self.fake / "crontab").chmod(0o755)

    def write(self, name: str, content: str) -> None:
        (self.table if name == "crontab" else self.demo / name).write_text(content)

    def env(self) -> dict[str, str]:
        return {"HOME": str(self.demo / "home"),
                "PATH": f"{self.fake}:{Path(sys.executable).parent}:/usr/bin:/bin",
                "LANG": "C.UTF-8", "TZ": os.environ.get("TZ", "UTC"), "NO_COLOR": "1",
                "COLUMNS": "100", "TMPDIR": str(self.where), "LOGNAME": "me",
                "FAKE_CRONTAB_FILE": str(self.table), "FAKE_CRONTAB_LOG": os.devnull,
                # the apply lock is per user, outside HOME: a page's applies must not wait
                # for another test's (its "waiting for" line would break the transcript)
                "SCHEDGEN_TEST_APPLY_LOCK": str(self.where / "apply.lock")}

    def run(self, doc: Doc, block: Block) -> list[str]:
        """Run a console block; the differences, as problems."""
        # One shell for the whole block, as in a terminal: `$?`, `cd` and variables carry
        # over. A marker line before each command splits the output.
        todo = steps(block)
        script = "exec 2>&1\n" + "".join(
            f"sg_s=$?; printf '\\n{MARK}%d\\n' {i}; (exit $sg_s)\n{s.command}\n"
            for i, s in enumerate(todo))
        r = subprocess.run(["bash", "-c", script], cwd=self.demo, env=self.env(), text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        printed = r.stdout.replace(str(self.demo), SHOWN_AS)
        parts = re.split(rf"\n?\n{MARK}\d+\n", "\n" + printed)[1:]
        out = []
        for step, part in zip(todo, parts, strict=True):
            got = [shape(g) for g in part.rstrip("\n").split("\n")] if part.strip("\n") else []
            want = [shape(w) for w in step.expected]
            if not matches(want, got):
                diff = "\n".join(difflib.unified_diff(want, got, "in the docs", "printed today",
                                                      lineterm=""))
                out.append(f"{rel(doc.path)}:{block.start}: `$ {step.command}` prints "
                           f"something else today:\n{diff}")
        return out


def check_console(doc: Doc, where: Path) -> list[str]:
    session = Session(where)
    out = []
    for b in doc.blocks:
        d = b.directive or ""
        if d.startswith("file "):
            session.write(d.split()[1], "\n".join(b.lines) + "\n")
            continue
        if d and not d.startswith("skip"):
            out.append(f"{rel(doc.path)}:{b.start}: unknown docs-test directive: {d}")
            continue
        if not runs_schedgen(b) or d.startswith("skip") or rel(doc.path) in NOT_RUN:
            continue
        out += session.run(doc, b)
    return out


# ---- the tests ----------------------------------------------------------------------

DOCS = markdown_files()
IDS = [rel(p) for p in DOCS]


@pytest.mark.parametrize("path", DOCS, ids=IDS)
def test_markdown_is_whole(path: Path) -> None:
    doc = parse(path)
    problems = check_fences(doc) + check_tables(doc) + check_toml(doc) + check_links(doc)
    assert not problems, "\n".join(problems)


def runnable(path: Path) -> bool:
    return rel(path) not in NOT_RUN and any(
        runs_schedgen(b) and not (b.directive or "").startswith("skip") for b in parse(path).blocks)


@pytest.mark.parametrize("path", [p for p in DOCS if runnable(p)], ids=rel)
def test_console_examples_print_what_the_commands_print(path: Path, tmp_path: Path) -> None:
    problems = check_console(parse(path), tmp_path)
    assert not problems, "\n\n".join(problems)


def example_configs() -> list[tuple[str, Block]]:
    """toml examples that are whole configs: a [jobs.x] table, not the NAME placeholder,
    not marked `invalid` (an example of what validate refuses)."""
    return [(f"{rel(p)}:{b.start}", b) for p in DOCS for b in parse(p).blocks
            if b.lang == "toml" and any(line.startswith("[jobs.") for line in b.lines)
            and not any(line.startswith("[jobs.NAME") for line in b.lines)
            and not (b.directive or "").endswith(" invalid")]


@pytest.mark.parametrize(("where", "block"), example_configs(), ids=lambda v: v if isinstance(v, str) else "")
def test_example_configs_are_valid(where: str, block: Block, tmp_path: Path) -> None:
    from schedgen.config.load import loads

    loads("\n".join(block.lines), tmp_path / "jobs.toml")  # ConfigError: says which key


def commands_table(path: Path) -> list[str]:
    """The commands a page's command table names, in order (the first word of each
    first cell; `(also x)` names an alias)."""
    doc = parse(path)
    names: list[str] = []
    rows = [line for _, line in doc.prose if line.startswith("| `")]
    for row in rows:
        first = re.split(r"(?<!\\)\|", row)[1]
        names.append(re.findall(r"`([a-z]+)", first)[0])
        names += re.findall(r"\(also `([a-z]+)`\)", first)
    return names


@pytest.mark.parametrize("page", ["README.md", "docs/commands.md"])
def test_the_commands_table_names_every_command_once(page: str) -> None:
    from schedgen.cli import app

    cli = sorted(c.name or (c.callback.__name__ if c.callback else "")
                 for c in app.registered_commands)
    assert sorted(commands_table(REPO / page)) == cli


def test_readme_is_a_front_door() -> None:
    assert len((REPO / "README.md").read_text().splitlines()) <= 250


def test_the_console_examples_that_are_not_run_say_why() -> None:
    for path in DOCS:
        for b in parse(path).blocks:
            if (b.directive or "").startswith("skip"):
                assert re.match(r"skip \(.+\)$", b.directive or ""), (rel(path), b.start)


def test_jobs_toml_reference_is_the_generated_one() -> None:
    from tools import docs_reference

    assert (REPO / "docs" / "jobs-toml.md").read_text(encoding="utf-8") == \
        docs_reference.markdown(), "docs/jobs-toml.md is stale: run `python -m tools.docs_reference`"


# ---- the checker, checked on planted markdown -----------------------------------------

PLANTED = """# Planted

| command | does |
|---|---|
| `render` | write the files |
| `diff` | show the changes |
| `render` | write the files |

See [the design](design.md) and [nowhere](no-such-file.md) and [a heading](#planted)
and [no heading](#no-such-heading).

```toml
label_prefix = "a"
label_prefix = "b"
```

```sh
echo an unclosed fence
"""


def planted(tmp_path: Path, text: str) -> Doc:
    f = tmp_path / "planted.md"
    f.write_text(text)
    (tmp_path / "design.md").write_text("# Design\n")
    return parse(f)


def test_the_checker_finds_a_duplicated_row(tmp_path: Path) -> None:
    problems = check_tables(planted(tmp_path, PLANTED))
    assert len(problems) == 1 and "planted.md:7: table row repeats line 5" in problems[0]


def test_the_checker_finds_two_rows_for_one_key(tmp_path: Path) -> None:
    doc = planted(tmp_path, "| key | what |\n|---|---|\n| `targets` | a |\n| `path` | b |\n"
                            "| `targets` | c |\n")
    assert check_tables(doc) == ["planted.md:5: `targets` has a row already at line 3"]
    # Rows that share a plain first cell (a section number, say) are not keys.
    assert check_tables(planted(tmp_path, "| s | what |\n|---|---|\n| 1 | a |\n| 1 | b |\n")) == []


def test_the_checker_finds_an_odd_fence_a_bad_link_and_a_duplicated_key(tmp_path: Path) -> None:
    doc = planted(tmp_path, PLANTED)
    assert check_fences(doc) == ["planted.md: 3 code fences, an odd number: one is never "
                                 "closed and what follows renders as code"]
    assert check_links(doc) == ["planted.md:9: link to a missing file: no-such-file.md",
                                "planted.md:10: link to a missing heading: #no-such-heading"]
    [toml] = check_toml(doc)
    assert "planted.md:12: toml example does not parse" in toml
    whole = planted(tmp_path, "# Whole\n\n| command | does |\n|---|---|\n| `render` | a |\n"
                              "| `diff` | b |\n\nSee [the design](design.md#design) and "
                              "[here](#whole).\n\n```toml\nlabel_prefix = \"a\"\n```\n")
    assert check_fences(whole) + check_tables(whole) + check_toml(whole) + check_links(whole) == []


def test_the_checker_finds_a_console_example_that_drifted(tmp_path: Path) -> None:
    text = ("<!-- docs-test: file jobs.toml -->\n```toml\n[jobs.hi]\ncommand = [\"true\"]\n"
            "schedule = \"@daily\"\n```\n\n```console\n$ schedgen validate\n"
            "jobs.toml: valid, 2 jobs in namespace 'default'\n```\n")
    [problem] = check_console(planted(tmp_path, text), tmp_path)
    assert "`$ schedgen validate` prints something else today" in problem
    assert "+jobs.toml: valid, 1 job in namespace 'default'" in problem
    fixed = planted(tmp_path, text.replace("2 jobs", "1 job"))
    assert check_console(fixed, tmp_path) == []
