"""The `timezone` setting: an IANA name the zone database knows, and the job's zone.

Kept apart from the widening code so that loading a config stays cheap: the zone list
is only walked to suggest a name after a miss.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from schedgen.schedule.expressions import Every, Reboot
from schedgen.targets import registry

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

# Names as the zone database spells them; also keeps the name safe to put in a
# shell variable and a path.
_NAME = re.compile(r"[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+)*")
# Files in the database that are not zones a user means.
_NOT_ZONES = {"localtime", "posixrules", "Factory", "leapseconds", "tzdata.zi"}


class _Zoned(Protocol):
    @property
    def timezone(self) -> str | None: ...


def zone_name(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected an IANA zone name like \"Europe/Kyiv\", got {type(value).__name__}")
    # zoneinfo (and the sysconfig it reads its search path from) only for a config
    # that names a zone: every command loads this module.
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if _NAME.fullmatch(value) and value not in _NOT_ZONES:
        try:
            ZoneInfo(value)
            return value
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    raise ValueError(f"{value!r} is not a zone in the zone database{_suggest(value)}")


def _suggest(value: str) -> str:
    import difflib  # only for a zone that is wrong (start-up time)
    from zoneinfo import available_timezones

    names = {n for n in available_timezones() if n not in _NOT_ZONES}
    by_fold = {n.casefold(): n for n in names}
    if value.casefold() in by_fold:
        return f"; did you mean {by_fold[value.casefold()]!r}?"
    # Compare the city part too: "Europe/Kiev" -> "Europe/Kyiv", "New_York" -> "America/New_York".
    tail = {n.rsplit("/", 1)[-1].casefold(): n for n in names}
    close = difflib.get_close_matches(value.casefold(), list(by_fold), n=1, cutoff=0.75)
    if not close:
        close = difflib.get_close_matches(value.rsplit("/", 1)[-1].casefold(), list(tail), n=1,
                                          cutoff=0.75)
        close = [tail[close[0]]] if close else []
    else:
        close = [by_fold[close[0]]]
    return f"; did you mean {close[0]!r}?" if close else " (names look like \"Europe/Kyiv\" or \"UTC\")"


def conflicts(schedule: tuple[object, ...], run_at_load: bool, targets: tuple[str, ...]) -> list[str]:
    """What a zoned job cannot have: the gate tests wall times, these have none."""

    out = []
    if any(isinstance(e, Every) for e in schedule):
        out.append("@every counts elapsed time, which has no zone; drop `timezone` or use a "
                   "cron expression")
    if any(isinstance(e, Reboot) for e in schedule):
        out.append("@reboot runs at boot, which has no zone; give it a job of its own "
                   "without `timezone`")
    if run_at_load and any(registry.get(t).on_load for t in targets):
        out.append("run_at_load would start the job at load time, which the time-zone gate "
                   "skips; drop one of the two")
    return out


def job_zone(job: _Zoned) -> ZoneInfo | None:
    """The zone a job's schedule is read in, or None for the host's local time.

    For targets that carry a zone natively (systemd OnCalendar, kubernetes timeZone):
    they need only this, none of the widening.
    """
    from zoneinfo import ZoneInfo

    return ZoneInfo(job.timezone) if job.timezone else None
