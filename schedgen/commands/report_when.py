"""`--since`/`--until` of `report`: a time ago (`2d`, `12h`) or a local date or date-time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from schedgen.errors import UsageError
from schedgen.schedule.upcoming import local_zone
from schedgen.units import parse_duration


def utc_now() -> datetime:
    return datetime.now(UTC)


def when(value: str | None, now: datetime, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        return now - timedelta(seconds=parse_duration(value))
    except ValueError:
        pass
    try:
        t = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{option}: {value!r} is neither a time ago (2d, 12h) nor a date "
                         "(2026-01-05, 2026-01-05T10:00)") from None
    return (t if t.tzinfo else t.replace(tzinfo=local_zone())).astimezone(UTC)
