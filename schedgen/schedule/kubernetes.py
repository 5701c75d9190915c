"""A job's schedule as a Kubernetes CronJob `spec.schedule` that fires on the same minutes.

Kubernetes reads schedules with robfig/cron, which differs from Debian cron in two
places (docs/design.md, "Known traps", has Debian's rules):
- day of week is 0-6: a 7 (Sunday in cron) is rejected by the API server;
- the day fields AND only when one of them is exactly `*` (or `*/1`); Debian cron ANDs
  when either merely starts with `*`, so `0 0 */2 * 1` fires on odd Mondays under cron
  and on every odd day plus every Monday under Kubernetes.
The expression is kept as written when robfig reads it as Debian does (checked by
brute force over every day/weekday pair); otherwise it is rewritten from the values it
matches, and refused only when no single robfig expression can fire on those days.
"""

from __future__ import annotations

from schedgen.schedule.expressions import (
    DAY_NAMES,
    MACROS,
    Cron,
    Every,
    Reboot,
    _parse_field,
    every_as_cron,
    parse_cron,
    value_runs,
)

Entry = Cron | Every | Reboot


def kube_schedule(entry: Entry) -> str:
    """The 5-field expression for spec.schedule; ValueError (for the user) if there is none."""
    if isinstance(entry, Reboot):
        raise ValueError("@reboot has no meaning for a CronJob (there is no boot to run at)")
    if isinstance(entry, Every):
        step = every_as_cron(entry.seconds)
        if step is None:
            raise ValueError(f"{entry.text!r} is no cron step expression (it does not divide an "
                             "hour or a day evenly), and a CronJob only has cron expressions")
        entry = parse_cron(step)
    text = MACROS.get(entry.text, entry.text)
    if _robfig_agrees(text, entry):
        return text
    canonical = _rewrite(entry)
    assert _robfig_agrees(canonical, entry), (text, canonical)
    return canonical


def _debian_days(c: Cron) -> set[tuple[int, int]]:
    pairs = set()
    for d in range(1, 32):
        for w in range(7):
            dom, dow = d in c.days, w in c.weekdays
            if dom and dow if c.day_and else dom or dow:
                pairs.add((d, w))
    return pairs


def _robfig_days(dom_text: str, dow_text: str) -> set[tuple[int, int]] | None:
    """Day/weekday pairs robfig/cron matches; None if it rejects the fields."""
    try:
        dow_raw = _parse_field(dow_text, "day of week", 0, 6, DAY_NAMES)
    except ValueError:
        return None  # a 7: robfig's day of week ends at 6
    days = _parse_field(dom_text, "day of month", 1, 31, None)
    star = _star(dom_text) or _star(dow_text)
    pairs = set()
    for d in range(1, 32):
        for w in range(7):
            dom, dow = d in days, w in dow_raw
            if dom and dow if star else dom or dow:
                pairs.add((d, w))
    return pairs


def _star(field: str) -> bool:
    """robfig's starBit: a term that is `*` or `?`, with no step above 1."""
    for term in field.split(","):
        base, _, step = term.partition("/")
        if base in ("*", "?") and (not step or int(step) <= 1):
            return True
    return False


def _robfig_agrees(text: str, c: Cron) -> bool:
    parts = text.split()
    if len(parts) != 5:
        return False
    return _robfig_days(parts[2], parts[4]) == _debian_days(c)


def _rewrite(c: Cron) -> str:
    full_days, full_weekdays = c.days_full, c.weekdays_full
    if c.day_and:
        if not full_days and not full_weekdays:
            raise ValueError(
                f"{c.text!r} fires only on days that match both day fields (a field starting "
                "with '*' makes Debian cron AND them); Kubernetes' cron ANDs them only when one "
                "is exactly '*', so no CronJob schedule fires on exactly those days. Restrict "
                "one day field only, or split the job")
        dom = "*" if full_days else _values(c.days)
        dow = "*" if full_weekdays else _values(c.weekdays)
    elif full_days or full_weekdays:
        dom = dow = "*"  # either field matching every day makes every day match
    else:
        dom, dow = _values(c.days), _values(c.weekdays)
    return " ".join((_field(c.minutes, 60), _field(c.hours, 24), dom, _field(c.months, 12), dow))


def _field(values: frozenset[int], size: int) -> str:
    return "*" if len(values) == size else _values(values)


def _values(values: frozenset[int]) -> str:
    """1,2,3,5 -> "1-3,5"."""
    return ",".join(value_runs(values, shortest=2))
