"""events.jsonl read from the end, across its rotated copies, newest line first.

A job with 10,000 runs has megabytes of events; `history -n 20` needs the last few
kilobytes. Lines are read backwards in blocks, so the cost follows what is asked for,
not the size of the file. The wrapper writes every line in one append, in time order.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schedgen.records import untrusted

BLOCK = 64 * 1024
_TS = len('{"ts":"')
# A time outside these years is no wrapper's: it is not trusted (and year 1 or 9999
# would overflow when shown in a zone west or east of UTC).
FIRST_YEAR, LAST_YEAR = 1970, 9998
_DECODER = json.JSONDecoder(strict=False)  # a raw control character in a string is kept


class Skipped:
    """Lines that are no record (cut short, not JSON, nested past any limit, a field of
    the wrong kind), counted as a reader passes over them."""

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


def skipped_words(n: int) -> str:
    return f"{n} unreadable event line{'s' if n != 1 else ''} skipped"


def files(log_dir: Path) -> list[Path]:
    """events.jsonl, then .1 (the newest rotated copy), .2, ... while they exist."""
    out = [log_dir / "events.jsonl"]
    n = 1
    while (log_dir / f"events.jsonl.{n}").exists():
        out.append(log_dir / f"events.jsonl.{n}")
        n += 1
    return out


def whole(line: bytes) -> bytes:
    """The line's last record: a line cut short by a full disk has no newline, so the next
    run's line is glued to it. Every record starts `{"ts":"`, which a string inside one
    cannot hold unescaped, so the record is what follows its last such start."""
    at = line.rfind(b'{"ts":"')
    return line[at:] if at > 0 else line


def lines_back(path: Path) -> Iterator[bytes]:
    """The file's lines, last first (a trailing partial line is yielded like any other;
    a line glued to a partial one before it is yielded without it, see `whole`)."""
    try:
        fd = untrusted.open_below(path.parent, path)  # the folder may be another account's
    except OSError:
        return
    try:
        st = os.fstat(fd)
        pos = st.st_size if stat.S_ISREG(st.st_mode) else 0
        rest = b""
        while pos > 0:
            step = min(BLOCK, pos)
            pos -= step
            chunk = os.pread(fd, step, pos) + rest
            parts = chunk.split(b"\n")
            rest = parts[0]
            for line in reversed(parts[1:]):
                if line:
                    yield whole(line)
        if rest:
            yield whole(rest)
    finally:
        os.close(fd)


def parse(line: bytes) -> dict[str, Any] | None:
    """The record on the line, or None: a line cut short by a full disk or a kill, or
    anything else the job's command wrote there (it can write this file)."""
    try:
        data = _DECODER.decode(line.decode("utf-8", errors="surrogateescape"))
    except (ValueError, RecursionError):  # RecursionError: nested [[[[... deep
        return None
    return data if isinstance(data, dict) and isinstance(data.get("event"), str) else None


def back(log_dir: Path, skipped: Skipped | None = None) -> Iterator[dict[str, Any]]:
    """Every event of the job, newest first; lines that are none are counted in ``skipped``."""
    for path in files(log_dir):
        for line in lines_back(path):
            ev = parse(line)
            if ev is not None:
                yield ev
            elif skipped is not None:
                skipped.n += 1


def stamps_back(log_dir: Path, names: frozenset[str]) -> Iterator[tuple[str, str, int]]:
    """(ts, event, pid) of each event named in ``names``, newest first, parsing only what
    the wrapper's fixed prefix gives away: `{"ts":"<20 chars>","event":"<name>",...,"pid":N`."""
    for path in files(log_dir):
        for line in lines_back(path):
            if line.startswith(b'{"ts":"') and line[_TS + 20:_TS + 31] == b'","event":"':
                end = line.find(b'"', _TS + 31)
                name = line[_TS + 31:end].decode("ascii", errors="replace")
                if name not in names:
                    continue
                ts = line[_TS:_TS + 20].decode("ascii", errors="replace")
                at = line.find(b'"pid":', end)
                stop = line.find(b",", at)
                try:
                    pid = int(line[at + 6:stop]) if at > 0 else 0
                except ValueError:
                    pid = 0
            else:
                ev = parse(line)
                if ev is None:
                    continue
                name, ts = str(ev.get("event")), str(ev.get("ts", ""))
                raw = ev.get("pid")
                pid = raw if isinstance(raw, int) else 0
            if name in names:
                yield ts, name, pid


def epoch(value: str) -> int | None:
    """A wrapper timestamp as Unix seconds, by integer arithmetic (it is parsed for every
    run `check` judges, so this avoids building datetimes)."""
    if len(value) != 20 or value[10] != "T" or value[19] != "Z":
        t = ts(value)
        return int(t.timestamp()) if t else None
    if not value.isascii():
        return None
    try:
        y, m, d = int(value[0:4]), int(value[5:7]), int(value[8:10])
        hh, mm, ss = int(value[11:13]), int(value[14:16]), int(value[17:19])
    except ValueError:
        return None
    if not (FIRST_YEAR <= y <= LAST_YEAR and 1 <= m <= 12 and 1 <= d <= 31 and hh < 24
            and mm < 60 and ss < 61 and min(hh, mm, ss) >= 0):
        return None
    sec = hh * 3600 + mm * 60 + ss
    # Days from civil (H. Hinnant), as the wrapper's clock does it the other way round.
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return (era * 146097 + doe - 719468) * 86400 + sec


def ts(value: object) -> datetime | None:
    """A wrapper timestamp (UTC ISO 8601, `2026-01-31T06:15:00Z`) as an aware datetime;
    None for anything else, a year outside FIRST_YEAR..LAST_YEAR included."""
    t = _ts(value)
    return t if t is not None and FIRST_YEAR <= t.year <= LAST_YEAR else None


def _ts(value: object) -> datetime | None:
    if not isinstance(value, str) or len(value) > 64 or not value.isascii():
        return None  # (int() would read other scripts' digits: "１９７０")
    try:
        if len(value) == 20 and value[10] == "T" and value[19] == "Z":  # the wrapper's own
            return datetime(int(value[0:4]), int(value[5:7]), int(value[8:10]),
                            int(value[11:13]), int(value[14:16]), int(value[17:19]), tzinfo=UTC)
    except ValueError:
        pass
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        try:
            d = datetime.fromisoformat(value)
            return d.astimezone(UTC) if d.tzinfo else d.replace(tzinfo=UTC)
        except (ValueError, OverflowError):
            return None


def run_id_time(run_id: str) -> datetime | None:
    """Run IDs start with their UTC start time: 20261130T061500Z-4242."""
    try:
        return datetime.strptime(run_id[:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
