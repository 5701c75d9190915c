"""Every test runs with HOME in a temp folder; the real home is checked untouched."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

pytest_plugins = ("tests.plugin",)

# Bytecode is cached (in the checkout's __pycache__ folders, ignored by git) even where
# PYTHONDONTWRITEBYTECODE is set: the test workers, which start after this, and the many
# interpreters the tests start (the CLI, the fake tools) would otherwise compile every
# module and rewrite every test's asserts from source each time, a quarter of the run.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

from tests.helpers import isolate_home  # noqa: E402  (after the bytecode switch above)

REAL_HOME = Path(os.path.expanduser("~"))
# What schedgen would write under a real home; none of it may change during tests.
_WATCHED = [".local/share/schedgen", ".local/state/schedgen", "Library/LaunchAgents",
            "Library/Logs/schedgen", "Library/Application Support/schedgen",
            ".cache/schedgen", "Library/Caches/schedgen", ".config/systemd/user"]


def _snapshot() -> dict[str, list[str]]:
    out = {}
    for rel in _WATCHED:
        p = REAL_HOME / rel
        out[rel] = sorted(str(x) for x in p.rglob("*")) if p.exists() else []
    return out


def _sweep_faketime() -> None:
    """`faketime` keeps a semaphore and a segment per process in /dev/shm. What outlives
    the wrapper (a run's notify in the background) makes its own, named by its pid, and
    never removes them; nor does a killed faketime. A later faketime that gets the same
    pid then fails ("sem_open: File exists"). Files of pids no longer alive are garbage,
    tests/faked_clock.py's of a killed worker too."""
    shm = Path("/dev/shm")
    for f in [*shm.glob("*faketime_s*_*"), *shm.glob("*schedgen_tests_clock_*")] if shm.is_dir() else []:
        pid = f.name.rpartition("_")[2]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            f.unlink(missing_ok=True)
        except OSError:
            pass


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Four workers per CPU for `-n auto`: many tests spend their time waiting on the
    processes they start (cron's minute, signals, timeouts), not computing (on 2 CPUs,
    in one series: 4 workers took 155 s, 6 took 110 s, 8 took 99 s, 10 took 100 s).
    Past 16, one per CPU: each worker's start-up and collection would cost more than it
    saves."""
    n = os.cpu_count() or 1
    return min(4 * n, max(n, 16))


def _default_signals() -> None:
    """A suite started in the background of a script (`cmd &`) inherits SIGINT and
    SIGQUIT ignored, and so would every wrapper it starts: a non-interactive bash cannot
    trap a signal it was given ignored, so the signal tests would test nothing. cron,
    launchd and systemd start jobs with the default dispositions; so do the tests."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGQUIT) is signal.SIG_IGN:
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def pytest_sessionstart(session: pytest.Session) -> None:
    _default_signals()   # in the controller and in each worker (they inherit it too)
    if not hasattr(session.config, "workerinput"):   # once, in the controller
        _sweep_faketime()
        if session.config.getoption("numprocesses", None):
            _compile_before_the_workers()


def _compile_before_the_workers() -> None:
    """On a fresh checkout every worker would compile the package and rewrite every test
    module's asserts at the same moment, before any of them has cached the result: 4 s of
    CPU each. Done here once, before the workers start (xdist starts them after this
    hook), they find it cached. On a warm checkout this costs a stat and a hash per file:
    a module whose rewritten code is cached for its source as it is now is not imported
    (the imports took a second of the run's start, before any worker began)."""
    import compileall
    import importlib
    import importlib.util

    from _pytest.assertion.rewrite import PYC_TAIL

    root = Path(__file__).resolve().parent.parent
    compileall.compile_dir(root / "schedgen", quiet=1)
    compileall.compile_dir(root / "tests", quiet=1)   # the helpers the test modules import
    for f in sorted((root / "tests").glob("test_*.py")):
        pyc = f.parent / "__pycache__" / (f.stem + PYC_TAIL)
        try:
            # pytest's own test of its cache (assertion/rewrite.py, _read_pyc): the header
            # holds the hash of the source it was made from
            head = pyc.read_bytes()[:16]
            if (head[:4] == importlib.util.MAGIC_NUMBER and head[4:8] == b"\x03\x00\x00\x00"
                    and head[8:16] == importlib.util.source_hash(f.read_bytes())[:8]):
                continue
        except OSError:
            pass
        try:
            importlib.import_module(f"tests.{f.stem}")   # through pytest's rewriting hook
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001  a module-level skip, an error: the worker says
            pass


@pytest.fixture(autouse=True)
def _faketime_litter():
    yield
    _sweep_faketime()


@pytest.fixture(scope="session", autouse=True)
def _templates_compiled_once_per_worker():
    """Each test has a HOME of its own, so schedgen keeps a jinja2 environment and a cache
    of compiled templates per test (render/artifacts.py) and compiles every template again
    in each: a tenth of the suite's CPU. The code jinja2 makes of one source under the same
    options is the same in all of them, so a worker makes it once; loading and storing the
    compiled templates in each test's cache still happen as in a fresh process."""
    import jinja2

    compile_ = jinja2.Environment.compile
    made: dict[tuple, object] = {}

    def compile_once(self, source, name=None, filename=None, raw=False, defer_init=False):
        if not isinstance(source, str):
            return compile_(self, source, name, filename, raw, defer_init)
        escape = self.autoescape(name) if callable(self.autoescape) else self.autoescape
        key = (source, name, filename, raw, defer_init, escape, self.trim_blocks,
               self.lstrip_blocks, self.keep_trailing_newline, self.newline_sequence,
               self.block_start_string, self.block_end_string, self.variable_start_string,
               self.variable_end_string, self.comment_start_string, self.comment_end_string,
               self.line_statement_prefix, self.line_comment_prefix, self.optimized,
               self.undefined, self.finalize, tuple(sorted(self.extensions)),
               tuple(sorted(self.filters)), tuple(sorted(self.tests)))
        if key not in made:
            made[key] = compile_(self, source, name, filename, raw, defer_init)
        return made[key]

    jinja2.Environment.compile = compile_once  # type: ignore[method-assign]
    yield
    jinja2.Environment.compile = compile_  # type: ignore[method-assign]


@pytest.fixture(scope="session", autouse=True)
def _real_home_untouched():
    before = _snapshot()
    yield
    after = _snapshot()
    assert before == after, f"a test wrote into the real home: {before} -> {after}"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME for each test, with XDG and schedgen variables cleared."""
    return isolate_home(monkeypatch, tmp_path)


_GUARD = """#!/bin/sh
echo "test guard: a test reached the real $(basename "$0") $*; use the fakes in tests/fakes.py" >&2
exit 99
"""


@pytest.fixture(scope="session")
def _guard_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    guard = tmp_path_factory.mktemp("guard-bin")
    for name in ("crontab", "launchctl", "systemctl", "loginctl", "kubectl"):
        (guard / name).write_text(_GUARD)
        (guard / name).chmod(0o755)
    return guard


@pytest.fixture(autouse=True)
def _no_real_crontab_or_launchctl(request: pytest.FixtureRequest, _guard_bin: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside the end-to-end test, `crontab`, `launchctl`, `systemctl`, `loginctl` and `kubectl`
    fail loudly unless faked."""
    if request.node.get_closest_marker("e2e"):
        return
    monkeypatch.setenv("PATH", f"{_guard_bin}{os.pathsep}{os.environ.get('PATH', '')}")


def _worker_shares(total: int, workers: int) -> list[int]:
    """How many of ``total`` tests xdist's worksteal scheduler hands each worker at the
    start, in order: the pending list, cut front to back, ``len(pending) // nodes_left``."""
    sizes = []
    for left in range(workers, 0, -1):
        sizes.append((total - sum(sizes)) // left)
    return sizes


# Tests that take long (a wait, or much CPU), by node id prefix, longest first: each starts
# at the head of a worker's share, after the end-to-end tests, rather than last in a share
# where it would end the run alone. A tuple is one group: its tests share a module fixture,
# made once on the worker that runs them.
LONG: tuple[str | tuple[str, ...], ...] = (
    "tests/test_wrapper_stress.py::test_signal_stress_quick",
    "tests/test_wrapper_portability.py::test_shellcheck_finds_nothing_in_the_installed_shared_files",
    "tests/test_wrapper_portability.py::test_shellcheck_passes_on_every_rendered_wrapper[everything]",
    "tests/test_wrapper_portability.py::test_shellcheck_passes_on_every_rendered_wrapper[policies]",
    "tests/test_docs.py::test_console_examples_print_what_the_commands_print[docs/tutorial.md]",
    ("tests/test_report.py::test_the_page_is_self_contained",
     "tests/test_report.py::test_chromium_shows_a_lane_per_job_and_the_right_marks"),
    "tests/test_report.py::test_a_month_shows_every_failure_and_timeout_and_each_lane_s_durations",
    "tests/test_report.py::test_a_fresh_install_fills_the_width_and_shows_each_failure",
    "tests/test_hostile_fuzz.py::test_a_corpus_of_10000_lines_and_1000_names_through_every_reader",
    "tests/test_notify_sh.py::test_slow_notify_and_ping_never_hold_the_lock_or_the_exit_status",
    "tests/test_yamlout.py::test_what_is_written_is_read_back_unchanged",
    "tests/test_wrapper_queue.py::test_seed_000_five_workers_at_once_process_57_files_exactly_once",
    "tests/test_import_corpus.py::test_every_corpus_file_imports_with_everything_accounted_for",
)


def _units_first(items: list[pytest.Item]) -> list[list[pytest.Item]]:
    """The end-to-end tests one by one, then the LONG ones (a group as one unit)."""
    units: list[list[pytest.Item]] = [[i] for i in items if i.get_closest_marker("e2e")]
    taken = {id(i) for u in units for i in u}
    for entry in LONG:
        prefixes = (entry,) if isinstance(entry, str) else entry
        found = [i for i in items if id(i) not in taken and i.nodeid.startswith(prefixes)]
        taken.update(id(i) for i in found)
        units += [found] if isinstance(entry, tuple) and found else [[i] for i in found]
    return units


def _long_first_on_each_worker(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """Each unit of _units_first at the head of a worker's share, dealt in turn. The
    end-to-end tests, together at the head of one share, ran one after another (a minute
    each) long after the rest of the suite had finished; side by side they wait for the
    same minute while the other workers compute."""
    units = _units_first(items)
    first = {id(i) for u in units for i in u}
    rest = [i for i in items if id(i) not in first]
    if workers < 2:
        return [i for u in units for i in u] + rest
    heads: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for n, unit in enumerate(units):
        heads[n % workers] += unit
    out: list[pytest.Item] = []
    for head, size in zip(heads, _worker_shares(len(items), workers), strict=True):
        take = max(0, size - len(head))
        out += head + rest[:take]
        del rest[:take]
    return out + rest


@pytest.hookimpl(trylast=True)   # after -m and -k have deselected: the shares are of what runs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The end-to-end cron tests wait for the daemon's minute (up to two): they start
    first, each on a worker of its own, so that the rest of the suite runs meanwhile
    rather than after them; the LONG tests next. Tests marked slow run only when asked
    for: `pytest -m slow`."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    items[:] = _long_first_on_each_worker(items, workers)
    if "slow" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(skip)
