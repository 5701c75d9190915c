"""Portability of the generated wrappers: no bash-4 constructs, no GNU-only options, nothing
macOS lacks, and shellcheck-clean at warning level, for the shared runtime, every shape of
job file, and the standalone form (runtime inlined)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from schedgen.render.artifacts import notify_text, runtime_text, wrapper
from tests.wrapper_kit import BASH, hidden_tools_bin, make_job

# (pattern, why): each is a construct bash 3.2 (macOS) lacks, or a GNU-only option or tool.
FORBIDDEN: list[tuple[str, str]] = [
    (r"\b(declare|local|typeset)\s+-[a-zA-Z]*[AnglLuU]", "declare -A/-n/-g/-l/-u (bash 4)"),
    (r"\$\{[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?(,,?|\^\^?)[^}]*\}",
     "case modification ${v,,} ${v^^} (bash 4)"),
    (r"\$\{[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?@[QEPAaUuLK]\}", "${v@Q} transformations (bash 4.4+)"),
    (r"\b(mapfile|readarray|coproc)\b", "mapfile/readarray/coproc (bash 4)"),
    (r"\|&", "|& (bash 4)"),
    (r"&>>", "&>> (bash 4)"),
    (r";;&|;&", "case fall-through ;& ;;& (bash 4)"),
    (r"\bwait\s+-[a-z]*[nfp]", "wait -n/-f/-p (bash 4.3+)"),
    (r"\{[A-Za-z_][A-Za-z0-9_]*\}[<>]", "{fd}> automatic descriptors (bash 4.1)"),
    # EPOCHSECONDS only as ${EPOCHSECONDS:-} (unset in bash 3.2, where date is used instead)
    (r"\b(EPOCHREALTIME|BASHPID|SRANDOM|BASH_ARGV0)\b|(?<!\$\{)\bEPOCHSECONDS\b|EPOCHSECONDS(?!:-\})",
     "bash 4/5 variables"),
    (r"%\([^)]*\)T", "printf %(...)T (bash 4.2)"),
    (r"(\[\[|\btest|\[)\s+-v\s", "test -v (bash 4.2)"),
    (r"\$\{[A-Za-z_][A-Za-z0-9_]*\[-\d", "negative array subscripts (bash 4.3)"),
    (r"\bshopt\s+-s\s+(globstar|lastpipe|inherit_errexit|assoc_expand_once|patsub_replacement)",
     "bash 4+ shell options"),
    (r"\bread\b[^\n;|]*\s-[a-zA-Z]*[Ni]\b", "read -N / -i (bash 4)"),
    (r"\bread\b[^\n;|]*-t\s*\d*\.\d", "fractional read -t (bash 4)"),
    (r"=~", "[[ =~ ]] (regex quoting differs in bash 3.2)"),
    (r"(?<!\+)\"\$\{[A-Za-z_][A-Za-z0-9_]*\[@\]\}\"",
     '"${a[@]}" fails on an empty array under set -u in bash 3.2: use ${a[@]+"${a[@]}"}'),
    (r"\blocal\b[^\n;#]*\sIFS=(?=\s|;|$)",
     "local IFS= (empty for the function and all it calls: bash 3.2 joins ${a[@]+\"${a[@]}\"} "
     "into one word where IFS is empty; empty it for the one line that needs it)"),
    (r"\bstat\s+-c\b|\bstat\s+--", "stat -c (GNU; BSD has stat -f)"),
    (r"\bdate\s+(-d|--date)\b", "date -d (GNU)"),
    (r"%N", "%N nanoseconds (GNU date)"),
    (r"\btouch\s+-d\b", "touch -d (GNU)"),
    (r"-printf\b", "find -printf (GNU)"),
    (r"\bgrep\s+-[a-zA-Z]*P", "grep -P (GNU)"),
    (r"\bhead\s+-n\s*-\d", "head -n -N (GNU)"),
    (r"\bxargs\s+-[a-zA-Z]*r", "xargs -r (GNU)"),
    (r"\breadlink\s+-[a-zA-Z]*f", "readlink -f (GNU before macOS 12.3)"),
    (r"\bsed\s+(-[a-zA-Z]*\s+)*-i", "sed -i (GNU and BSD disagree)"),
    (r"(?:^|[;&|(!]|\b(?:then|do|else|exec))\s*(timeout|setsid|tac|sha256sum|md5sum|nproc|stdbuf"
     r"|shuf|numfmt)\s", "a tool macOS lacks"),
]


def code_lines(text: str) -> list[tuple[int, str]]:
    """The script's lines, without full-line comments (the header quotes user text)."""
    return [(i, line) for i, line in enumerate(text.splitlines(), 1)
            if not line.lstrip().startswith("#")]


def portability_problems(text: str) -> list[str]:
    found = []
    lines = code_lines(text)
    for n, (i, line) in enumerate(lines):
        for pattern, why in FORBIDDEN:
            if why.startswith("stat -c") and any(
                    "stat -f" in later for _, later in lines[n + 1:n + 3]):
                continue  # the GNU spelling tried beside the BSD one (fscheck.sh)
            if re.search(pattern, line):
                found.append(f"line {i}: {why}: {line.strip()}")
    # flock(1) may only be used where `command -v flock` found it.
    body = "\n".join(line for _, line in code_lines(text))
    for m in re.finditer(r"^.*\bflock\s+-[nw]\b.*$", body, re.M):
        before = body[:m.start()].rsplit("\n", 3)
        if "command -v flock" not in "\n".join(before):
            found.append(f"flock(1) used without checking it exists: {m.group(0).strip()}")
    return found


def _shapes(tmp_path: Path) -> dict[str, Any]:
    env_file = tmp_path / "x.env"
    q = {"inbox": str(tmp_path / "q" / "inbox")}
    return {
        "minimal": {"command": ["true"]},
        "string": {"command": "echo hi | tr a-z A-Z; exit 0", "lock": False},
        "placeholders": {"command": ["printf", "%s", "{run_id}", "{artifact_dir}", "{job}",
                                     "a b", "it's"], "description": "quotes \" ' $x `y`"},
        "everything": {
            "command": ["bash", "-c", 'echo "$1"', "_", "{item}"], "working_dir": str(tmp_path),
            "env": {"A": "1", "B": "two words"}, "env_file": str(env_file), "timeout": "5m",
            "smoke": ["echo", "{item}", "{artifact_dir}"],
            "lock": {"name": "shared.lock-name", "wait": "30s", "busy_exit": 0},
            "queue": {**q, "pattern": "*.json", "batch": 0, "stale_after": "2s",
                      "max_attempts": 5},
            "logs": {"max_size": "1KB", "keep": 0, "keep_runs": 1},
            "metrics_dir": str(tmp_path / "metrics"),
            "notify": {"command": ["mail", "-s", "it's {x}", "me"],
                       "ping_url": "https://hc.example/a?b=1",
                       "mail": ["ops@example.com", "ops+night@example.com"],
                       "sendmail": "/usr/sbin/sendmail", "webhook": "https://h.example/x?y=1",
                       "webhook_format": "teams", "after": 3},
        },
        "queue-batch-3": {"command": ["cat", "{item}"], "queue": {**q, "batch": 3},
                          "lock": False},
        "timeout-only": {"command": "sleep 1", "timeout": 3, "smoke": "true"},
        "smoke-string": {"command": ["true"], "smoke": "echo smoke; exit 0", "lock": False},
        "notify": {"command": ["false"], "notify": {"command": "echo \"$SCHEDGEN_JOB\" failed",
                                                     "ping_url": "https://hc.example/a?b=1"}},
        "catch-up-delay": {"command": ["true"], "schedule": "0 6 * * 1-5", "catch_up": "once",
                           "max_lateness": "6h", "random_delay": "10m"},
        "fresh-delay": {"command": ["true"], "random_delay": "5m", "random_delay_stable": False},
        "notify-queue": {"command": ["cat", "{item}"], "queue": {**q, "batch": 0},
                         "notify": {"command": ["mail", "-s", "it's {x}", "me"],
                                    "on": ["failure"]}},
    }


@pytest.fixture()
def jobs(tmp_path: Path) -> dict[str, Any]:
    return {name: make_job(tmp_path, name, **fields) for name, fields in _shapes(tmp_path).items()}


@pytest.fixture()
def rendered(jobs: dict[str, Any]) -> dict[str, str]:
    out = {name: w.text for name, w in jobs.items()}
    out["runtime"] = runtime_text()
    for name, w in jobs.items():
        out[f"{name} (standalone)"] = wrapper(w.job, w.config, standalone=True)
    return out


def test_no_bash_4_or_gnu_only_construct_in_any_rendered_wrapper(
        rendered: dict[str, str]) -> None:
    problems = {name: portability_problems(text) for name, text in rendered.items()}
    assert {k: v for k, v in problems.items() if v} == {}


@pytest.mark.parametrize("snippet", [
    "declare -A seen", "local -n ref=x", 'x=${y,,}', 'x=${y^^}', "mapfile -t lines <f",
    "cmd |& tee x", "cmd &>> log", "wait -n", "exec {fd}>f", "echo $EPOCHSECONDS",
    "printf '%(%s)T' -1", "[[ -v x ]]", 'echo "${a[-1]}"', "shopt -s globstar",
    "read -N 1 c", 'for x in "${arr[@]}"; do :; done', "stat -c %s f", "date -d yesterday",
    "date +%s%N", "touch -d 2020-01-01 f", "find . -printf '%p'", "grep -P 'x' f",
    "head -n -1 f", "xargs -r rm", "readlink -f x", "sed -i 's/a/b/' f", "timeout 5 cmd",
    "setsid cmd", "flock -n 9", '[[ $x =~ ^a ]]', "read -t 0.5 x", "  local LC_ALL=C IFS= f",
    "local IFS=",
])
def test_the_checker_catches_each_construct(snippet: str) -> None:
    assert portability_problems(f"#!/bin/bash\n{snippet}\n"), snippet


def test_the_checker_accepts_the_portable_spellings() -> None:
    ok = ('x=${a[@]+"${a[@]}"}\nlocal IFS=$\' \\t\\n\' x\nwhile IFS= read -r x; do :; done\n'
          'local x IFS=:\nif command -v flock >/dev/null; then\n'
          '  flock -n 9\nfi\nsleep 1\nfind d -size +9c\n# sed -i in a comment\n')
    assert portability_problems(ok) == []


SHAPES = tuple(_shapes(Path("/shapes")))
# Standalone (2 s): the shape with the most settings, which inlines every shared part
# (runtime, notify.sh). The others differ from it only in their job file, which is
# checked as installed.
STANDALONE_CHECKED = ("everything",)


@pytest.mark.parametrize("shape", SHAPES)  # one test each, so workers share the work
def test_shellcheck_passes_on_every_rendered_wrapper(tmp_path: Path, shape: str) -> None:
    if shutil.which("shellcheck") is None:
        if os.environ.get("CI"):
            pytest.fail("shellcheck is required in CI (apt-get install shellcheck)")
        pytest.skip("shellcheck not installed")
    w = make_job(tmp_path, shape, **_shapes(tmp_path)[shape])
    # every severity, infos included: the job file as installed, and standalone for the
    # shapes that inline each shared part (the runtime alone is checked below; a
    # standalone check costs a whole runtime's, some 2 s)
    texts = [w.text]
    if shape in STANDALONE_CHECKED:
        texts.append(wrapper(w.job, w.config, standalone=True))
    for text in texts:
        r = subprocess.run(["shellcheck", "-s", "bash", "-"], input=text,
                           capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout == "", r.stdout


@pytest.mark.parametrize("part", ["runtime", "notify"])
def test_shellcheck_finds_nothing_in_the_installed_shared_files(part: str) -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed")
    text = runtime_text() if part == "runtime" else notify_text()
    r = subprocess.run(["shellcheck", "-s", "bash", "-"], input=text,
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "", r.stdout


def test_every_rendered_wrapper_parses(rendered: dict[str, str], tmp_path: Path) -> None:
    for name, text in rendered.items():
        r = subprocess.run([BASH, "-n"], input=text, capture_output=True, text=True)
        assert r.returncode == 0, (name, r.stderr)


def test_a_job_file_is_settings_and_a_command_only(jobs: dict[str, Any]) -> None:
    """docs/design.md, "What a run does": <= 80 lines for a plain job; no logic (the runtime has it all)."""
    for name, w in jobs.items():
        text = w.text
        if name not in ("everything", "notify-queue"):  # plain jobs
            assert len(text.splitlines()) <= 80, name
        body = [line for _, line in code_lines(text)]
        assert body[-1] == 'sg_main "$@"'
        for absent in ("sg_claim_chunk", "set -m", "flock", "while ", "for ", "mv "):
            assert not any(absent in line for line in body), (name, absent)
    assert 'export A=1' in jobs["everything"].text
    assert "sg_lock_name=''" in jobs["string"].text


def test_the_runtime_is_plain_bash_not_a_template() -> None:
    text = runtime_text()
    assert "{{ " not in text and "{% " not in text  # (bash has ${#v}, not jinja comments)
    assert "schedgen-managed" in text.splitlines()[0]


def test_the_no_flock_path_really_has_no_flock_timeout_or_setsid(tmp_path: Path) -> None:
    bindir = hidden_tools_bin(tmp_path)
    for tool in ("flock", "timeout", "setsid"):
        r = subprocess.run([BASH, "-c", f"PATH={bindir}; command -v {tool}"],
                           capture_output=True)
        assert r.returncode != 0, tool
    r = subprocess.run([BASH, "-c", f"PATH={bindir}; command -v perl mv date find"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and len(r.stdout.split()) == 4


def test_the_fork_free_clock_matches_the_utc_calendar(tmp_path: Path) -> None:
    """sg_stamp_of turns epoch seconds into dates with bash arithmetic, sg_epoch_of back;
    both checked against Python, straight from the runtime's own functions."""
    import datetime as dt
    import random

    runtime = tmp_path / "runtime.bash"
    runtime.write_text(runtime_text())
    rng = random.Random(3)
    epochs = [0, 59, 86399, 86400, 951782400, 951868800, 1709164800, 1709251199,
              4102444800, 4107542400, 253402300799] + [rng.randrange(0, 2**33) for _ in range(300)]
    script = f". {runtime}\n" + "".join(
        f'sg_stamp_of {e}; sg_epoch_of "$sg_s"; echo "$sg_s $sg_e"\n' for e in epochs)
    out = subprocess.run([BASH, "-c", script], capture_output=True, text=True, check=True).stdout
    for e, line in zip(epochs, out.splitlines(), strict=True):
        t = dt.datetime.fromtimestamp(e, dt.UTC)
        assert line == f"{t:%Y%m%dT%H%M%SZ} {e}"
