"""The one error boundary: expected failures become their exit codes, bugs a log file.

An expected failure (SchedgenError) prints its message and exits with its code. Anything
else is a bug: one line says so and where the log is (traceback, version, platform),
and the exit status is 70 (EX_SOFTWARE), never a bare traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from schedgen import __version__, paths
from schedgen.errors import EXIT_BUG, SchedgenError

ISSUES = "please report it with the log attached"


def log_path() -> Path:
    return paths.state_dir() / "schedgen.log"


def _write_log(exc: BaseException) -> Path:
    # Only a bug pays for these imports, not every command's start-up.
    import platform
    import tempfile
    import traceback
    from datetime import UTC, datetime

    text = (f"### {datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')} schedgen {__version__}\n"
            f"argv: {sys.argv!r}\n"
            f"python: {sys.version.split()[0]} ({sys.executable})\n"
            f"platform: {platform.platform()}\n\n"
            + "".join(traceback.format_exception(exc)) + "\n")
    for path in (log_path(), Path(tempfile.gettempdir()) / f"schedgen-{os.getuid()}.log"):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as fh:
                fh.write(text)
            return path
        except OSError:
            continue
    raise OSError("no place to write the log")


def run(main: Callable[[], object], echo: Callable[[str], None]) -> int:
    """Call ``main``; return the exit status the failure (if any) maps to."""
    try:
        main()
    except SchedgenError as exc:
        echo(f"schedgen: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - the boundary: every bug ends here
        try:
            where = f"details in {_write_log(exc)}"
        except OSError:
            where = "no log could be written; run it again with a writable state dir"
        first = next(iter(str(exc).splitlines()), "")
        echo(f"schedgen: unexpected error, a bug in schedgen ({type(exc).__name__}"
             f"{': ' + first if first else ''}); {where}; {ISSUES}")
        return EXIT_BUG
    return 0
