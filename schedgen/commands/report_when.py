"""`--since`/`--until` of `report`: a time ago (`2d`, `12h`) or a local date or date-time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from schedgen.errors import UsageError
from schedgen.outcomes.events import FIRST_YEAR, LAST_YEAR
from schedgen.schedule.upcoming import local_zone
from schedgen.units import parse_duration

# No record is stamped outside these (outcomes/events.py): a window beyond them is a slip.
EARLIEST = datetime(FIRST_YEAR, 1, 1, tzinfo=UTC)
LATEST = datetime(LAST_YEAR + 1, 1, 1, tzinfo=UTC)


def utc_now() -> datetime:
    return datetime.now(UTC)


def _before(option: str) -> UsageError:
    return UsageError(f"{option} reaches before {FIRST_YEAR}: no record is older")


def days_back(end: datetime, days: int) -> datetime:
    """The start of ``--days N`` before ``end``."""
    if days > (end - EARLIEST).days:
        raise _before(f"--days {days}")
    return end - timedelta(days=days)


def when(value: str | None, now: datetime, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        ago = parse_duration(value)
    except ValueError:
        pass
    else:
        if ago > (now - EARLIEST).total_seconds():
            raise _before(f"{option}: {value!r}")
        return now - timedelta(seconds=ago)
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{option}: {value!r} is neither a time ago (2d, 12h) nor a date "
                         "(2026-01-05, 2026-01-05T10:00)") from None
    try:
        u = (t if t.tzinfo else t.replace(tzinfo=local_zone())).astimezone(UTC)
    except OverflowError:  # an offset past year 1 or 9999
        u = EARLIEST - timedelta(days=1) if t.year < FIRST_YEAR else LATEST
    if u < EARLIEST:
        raise _before(f"{option}: {value!r}")
    if u >= LATEST:
        raise UsageError(f"{option}: {value!r} is after {LAST_YEAR}: no record is newer")
    return u
