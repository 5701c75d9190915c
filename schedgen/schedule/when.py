"""The two ways schedgen writes a time: one for people, one for machines.

People read local time with its zone, to the minute: `2026-12-04 10:40 CET` (a zoned
job's times in its own zone). `--json` and the records carry RFC 3339 in UTC:
`2026-12-04T09:40:00Z`. status, history, next, check and logs use only these two.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo

from schedgen.schedule.upcoming import local_zone

PEOPLE = "%Y-%m-%d %H:%M %Z"


def human(t: datetime, zone: tzinfo | None = None) -> str:
    """`2026-12-04 10:40 CET`: in `zone`, else in t's own zone when it has one that is not
    UTC (a zoned job's), else the host's."""
    if zone is None:
        own = t.tzinfo
        if own is None or t.utcoffset() is None or own is UTC:
            zone = local_zone()
        else:
            zone = own
    local = t.astimezone(zone)
    name = local.strftime("%Z")
    if not name or name[0] in "+-":  # a zone with no abbreviation: its offset
        name = local.strftime("%z")
        name = f"{name[:3]}:{name[3:]}" if name else ""
    return f"{local:%Y-%m-%d %H:%M} {name}".rstrip()


def machine(t: datetime) -> str:
    """RFC 3339 in UTC, to the second: `2026-12-04T09:40:00Z`."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse(text: str) -> datetime | None:
    """A time schedgen wrote (RFC 3339, `Z` or an offset); None if it is not one."""
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)
