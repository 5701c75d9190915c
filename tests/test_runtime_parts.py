"""The runtime's parts (templates/runtime/) and its cut.

A plain run stops reading the runtime at the cut (templates/runtime/80-cut.bash): bash
parses a sourced file as it goes, so functions defined after it do not exist in a plain
run. Code before the cut may call one of them only behind a guard that implies the run
read past the cut, i.e. one of the cut's own conditions. This test lists those calls and
their guards, and fails on any other call across the cut.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from schedgen.render.artifacts import RUNTIME_PARTS, notify_text, runtime_text
from tests.wrapper_kit import BASH

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"

# What the cut reads on: a run goes past it when one of these holds.
CUT_CONDITIONS = {
    "inbox": '[ -n "${sg_inbox:-}" ]',
    "timeout": '[ "${sg_timeout:-0}" != 0 ]',
    "smoke": '[ "${SCHEDGEN_SMOKE:-}" = 1 ]',
    "foreground": '[ "${SCHEDGEN_FOREGROUND:-}" = 1 ]',
    "zone": '[ -n "${sg_tz_zone:-}" ]',
    "retries": '[ "${sg_retries:-0}" != 0 ]',
    "replace": '[ "${sg_on_busy:-}" = replace ]',
    "paused": '[ -n "$sg_paused" ]',
    "policy": '[ -n "${sg_policy:-}" ]',
}

# (caller before the cut, callee after it): the cut condition its guard implies.
ALLOWED = {
    ("sg_init", "sg_init_queue"): "inbox",          # [ -z "$sg_inbox" ] ||
    ("sg_main", "sg_smoke_checks"): "smoke",        # [ "$sg_smoke" != 1 ] ||
    ("sg_main", "sg_queue_main"): "inbox",          # [ -z "$sg_inbox" ] ||
    ("sg_keeper", "sg_jot"): "inbox",               # only with an item (sg_item_name)
    ("sg_run", "sg_run_dir_new"): "inbox",          # if [ -n "$sg_inbox" ]
    ("sg_run", "sg_watchdog"): "timeout",           # if [ "$sg_timeout" -gt 0 ]
    ("sg_run", "sg_wd_stop"): "timeout",            # sg_wd_pid is set: a watchdog runs
    ("sg_run", "sg_journal_read"): "inbox",         # an item, and sg_journal set
    ("sg_finish", "sg_item_end"): "inbox",          # [ -z "$sg_inbox" ] ||
    ("sg_finish", "sg_show"): "foreground",         # [ "$sg_fg" != 1 ] ||
    ("sg_on_exit", "sg_wd_stop"): "timeout",        # [ -z "$sg_wd_pid" ] ||
    ("sg_on_exit", "sg_item_end"): "inbox",         # if [ -n "$sg_inbox" ]
    ("sg_on_exit", "sg_flush"): "inbox",
    ("sg_on_exit", "sg_release"): "inbox",
    ("sg_on_exit", "sg_close_claim"): "inbox",
    ("sg_metrics_write", "sg_metrics_queue"): "inbox",  # [ -z "$sg_inbox" ] ||
    ("sg_main", "sg_tz_dropped"): "zone",          # sg_tz_drop: set by the gate only
    ("sg_main", "sg_retry_runs"): "retries",       # if [ "${sg_retries:-0}" = 0 ] ... else
    ("sg_finish", "sg_retry_due"): "retries",      # [ "${sg_retries:-0}" != 0 ] &&
    ("sg_on_exit", "sg_retry_exit"): "retries",    # [ "${sg_retries:-0}" = 0 ] ||
    ("sg_lock_busy_or", "sg_replace"): "replace",  # [ "${sg_on_busy:-}" != replace ] ||
    ("sg_run", "sg_replace_note"): "replace",
    ("sg_on_exit", "sg_replace_clear"): "replace",
    ("sg_main", "sg_policy_start"): "paused",       # [ -z "${sg_paused-}${sg_policy-}" ] ||
}

# Defined by the job file (templates/job.sh.j2).
JOB_FILE_FUNCTIONS = {"sg_env", "sg_command", "sg_smoke_command", "sg_notify_cmd"}

_DEF = re.compile(r"^(sg_\w+)\(\) \{$", re.M)
# A function's name as a word of code: not a variable ($x, ${x}), an assignment or an array.
_CALL = re.compile(r"(?<![\w$.{/#-])(sg_\w+)(?![\w=\[])")


def _code(text: str) -> str:
    """Comments out (a # that starts a word; ${#x} and $# stay)."""
    return "\n".join(re.sub(r"(^|\s)#.*$", "", line) for line in text.splitlines())


def _functions(text: str) -> list[tuple[str, int, str]]:
    """(name, offset, body) of each function defined at the top level."""
    out = []
    for m in _DEF.finditer(text):
        end = text.index("\n}\n", m.start())
        out.append((m.group(1), m.start(), _code(text[m.end():end])))
    return out


def _calls(body: str, names: set[str]) -> set[str]:
    return {m.group(1) for m in _CALL.finditer(body) if m.group(1) in names}


def _cut() -> tuple[str, int]:
    text = runtime_text()
    return text, text.index("# --- 80-cut.bash ---")


def test_the_parts_listed_are_the_files_in_the_folder() -> None:
    on_disk = sorted(p.name for p in (TEMPLATES / "runtime").iterdir())
    assert list(RUNTIME_PARTS) == on_disk


def test_the_cut_reads_on_exactly_for_its_conditions() -> None:
    cut = (TEMPLATES / "runtime" / "80-cut.bash").read_text()
    gate = _code(cut).strip()
    for cond in CUT_CONDITIONS.values():
        assert cond in gate
    assert gate.count("[ ") == len(CUT_CONDITIONS)
    assert gate.endswith("||\n  { sg_runtime_read=1; return 0 2>/dev/null; }")


def test_only_the_listed_calls_cross_the_cut() -> None:
    text, cut = _cut()
    functions = _functions(text)
    after = {name for name, at, _ in functions if at > cut}
    crossing = set()
    for name, at, body in functions:
        if at < cut:
            crossing |= {(name, callee) for callee in _calls(body, after)}
    top = _code(re.sub(r"^sg_\w+\(\) \{$.*?^\}$", "", text[:cut], flags=re.M | re.S))
    crossing |= {("(top level)", callee) for callee in _calls(top, after)}
    assert crossing == set(ALLOWED), (
        f"new calls across the cut: {sorted(crossing - set(ALLOWED))}; "
        f"listed but gone: {sorted(set(ALLOWED) - crossing)}")
    assert set(ALLOWED.values()) <= set(CUT_CONDITIONS)


def test_every_function_called_is_defined_somewhere() -> None:
    text = runtime_text()
    notify = notify_text()
    defined = ({n for n, _, _ in _functions(text)} | {n for n, _, _ in _functions(notify)}
               | JOB_FILE_FUNCTIONS)
    # An sg_ word in a command's place (sg_ variables are the others).
    code = "\n".join(_code(b) for _, _, b in _functions(text))
    commands = {m.group(2) for m in re.finditer(
        r"(^|;|&&|\|\||\bthen|\bdo|\belse|\bif|\bwhile|\btrap|!|\{|\)|\$\(|')\s*(sg_\w+)(?=[\s;')]|$)",
        code, re.M)}
    assert {"sg_run", "sg_big", "sg_on_exit"} <= commands and "sg_epoch" not in commands
    assert commands - defined == set()


def test_no_function_is_defined_twice() -> None:
    names = [n for n, _, _ in _functions(runtime_text())]
    assert len(names) == len(set(names))


def test_term_then_kill_is_written_once() -> None:
    """The stop of a process group (TERM, then KILL after the grace) lives in sg_term_kill
    alone: the wrapper's stop, a command's leftovers and the timeout all call it."""
    owners = {}
    for name, _, body in _functions(runtime_text()):
        if "kill -TERM" in body or "sleep 0.1" in body:
            owners[name] = body
    assert list(owners) == ["sg_term_kill"]
    callers = {name for name, _, body in _functions(runtime_text())
               if re.search(r"(^|\s)sg_term_kill\s", body, re.M)}
    assert callers == {"sg_reap", "sg_watchdog", "sg_replace"}


DOCS = Path(__file__).resolve().parent.parent / "docs" / "wrapper.md"


def test_the_docs_list_every_part() -> None:
    text = DOCS.read_text()
    table = text[text.index("## The runtime's parts"):text.index("## Upgrades")]
    assert re.findall(r"^\| `([^`]+)` \|", table, re.M) == list(RUNTIME_PARTS)


def test_the_docs_list_every_journal_record_kind_the_runtime_writes() -> None:
    text = runtime_text()
    written = set(re.findall(r"\bsg_jot ([a-z]) ", text))           # the run's own records
    written |= set(re.findall(r"printf '\\0([a-z])%s/", text))       # sg_move's and sg_mv1's records
    written |= set(re.findall(r'"([a-z])\$name"', text))              # sg_journal_keep's rewrite
    [reader] = [body for name, _, body in _functions(text) if name == "sg_journal_read"]
    read = set("".join(re.findall(r"^\s+\[?([a-z]+)\]?[*?]", reader, re.M)))
    doc = DOCS.read_text()
    table = doc[doc.index("### The claim's journal"):doc.index("An item's states")]
    documented = {k[0] for k in re.findall(r"^\| `([a-z])<", table, re.M)}
    assert written == documented == read == {"k", "x", "s", "d", "f", "c", "l"}


def test_leaving_the_comments_out_changes_no_function_and_no_value(tmp_path: Path) -> None:
    """The installed runtime has no comment lines: bash, having read it, holds the same
    functions (declare -f prints no comments) and the same globals as from the parts."""
    whole = tmp_path / "whole.bash"
    whole.write_text("".join((TEMPLATES / "runtime" / n).read_text() for n in RUNTIME_PARTS))
    installed = tmp_path / "installed.bash"
    installed.write_text(runtime_text())
    assert not [line for line in runtime_text().split("\n")[30:]
                if line.lstrip().startswith("#") and not line.startswith(("# --- ", "# shellcheck"))
                and "# shellcheck " not in line]
    dumps = []
    for f in (whole, installed):
        r = subprocess.run([BASH, "-c", f'SCHEDGEN_FOREGROUND=1; . {f}; declare -f; '
                            'declare -p | grep "^declare -- sg_"'],
                           capture_output=True, text=True, check=True)
        dumps.append(r.stdout)
    assert dumps[0] == dumps[1] and "sg_main ()" in dumps[0]
