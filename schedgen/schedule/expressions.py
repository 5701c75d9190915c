"""Schedule expressions: 5-field cron (Debian semantics), macros, @reboot, @every.

A job's schedule is a tuple of entries and fires at the union of their times.
Parsing is strict: anything Debian cron would reject, or that could never fire,
is a ValueError whose message is shown to the user.
"""

# No `from __future__ import annotations` here: typing.NamedTuple compiles each string
# annotation as its class is made, a cost at every start-up (docs/performance.md).

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import NamedTuple

from schedgen.units import format_duration, parse_duration

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun",
               "jul", "aug", "sep", "oct", "nov", "dec"]
DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
# Longest each month can be (February in a leap year).
MONTH_DAYS = dict(enumerate((31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31), start=1))

_FIELDS = (
    ("minute", 0, 59, None),
    ("hour", 0, 23, None),
    ("day of month", 1, 31, None),
    ("month", 1, 12, MONTH_NAMES),
    ("day of week", 0, 7, DAY_NAMES),
)


class Cron(NamedTuple):
    """A 5-field expression as the sets of values it matches (weekday 7 → 0)."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    # Debian cron: a day field starting with '*' makes the two day fields AND.
    day_and: bool

    @property
    def days_full(self) -> bool:
        return len(self.days) == 31

    @property
    def weekdays_full(self) -> bool:
        return len(self.weekdays) == 7


class Reboot(NamedTuple):
    text: str = "@reboot"


class Every(NamedTuple):
    seconds: int
    text: str


Entry = Cron | Reboot | Every


def _value(token: str, lo: int, hi: int, names: list[str] | None, field: str) -> int:
    low = token.lower()
    if names and low in names:
        return names.index(low) + (1 if field == "month" else 0)
    if not token.isdigit():
        hint = f" (names: {', '.join(names)})" if names else ""
        raise ValueError(f"{field} {token!r} is not a number{hint}")
    n = int(token)
    if not lo <= n <= hi:
        raise ValueError(f"{field} {n} is out of range {lo}-{hi}")
    return n


def _parse_field(text: str, field: str, lo: int, hi: int, names: list[str] | None) -> set[int]:
    out: set[int] = set()
    for term in text.split(","):
        if not term:
            raise ValueError(f"{field} field {text!r} has an empty list item")
        base, slash, step_text = term.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ValueError(f"{field} step {step_text!r} must be a positive number")
            step = int(step_text)
        if base == "*":
            start, end = lo, hi
        elif "-" in base:
            a, _, b = base.partition("-")
            start = _value(a, lo, hi, names, field)
            end = _value(b, lo, hi, names, field)
            if start > end:
                raise ValueError(f"{field} range {base!r} runs backwards")
        else:
            if slash:
                # Debian cron rejects "5/15"; say what it would accept.
                raise ValueError(f"{field} {term!r}: a step needs a range, like '{base}-{hi}/{step}'")
            start = end = _value(base, lo, hi, names, field)
        out.update(range(start, end + 1, step))
    return out


@lru_cache(maxsize=4096)  # immutable; an imported crontab repeats a few hundred of them
def parse_cron(text: str) -> Cron:
    parts = text.split()
    if len(parts) != 5:
        raise ValueError(
            f"{text!r} has {len(parts)} fields; expected 5 (minute hour day month weekday) "
            "or a macro like @daily"
        )
    sets = [_parse_field(p, name, lo, hi, names)
            for p, (name, lo, hi, names) in zip(parts, _FIELDS, strict=True)]
    weekdays = {0 if d == 7 else d for d in sets[4]}
    cron = Cron(
        text=" ".join(parts),
        minutes=frozenset(sets[0]), hours=frozenset(sets[1]), days=frozenset(sets[2]),
        months=frozenset(sets[3]), weekdays=frozenset(weekdays),
        day_and=parts[2].startswith("*") or parts[4].startswith("*"),
    )
    # With both day fields restricted cron ORs them, and the weekdays alone fire
    # (`0 0 31 2 1`: every Monday in February); only under AND do the days decide.
    if cron.day_and and not any(days_in_month(cron, m) for m in cron.months):
        raise ValueError(f"{text!r} can never fire: no month it names has those days")
    return cron


def value_runs(values: Iterable[int], *, sep: str = "-", shortest: int = 3,
               fmt: Callable[[int], str] = str) -> list[str]:
    """Values in order, consecutive ones of at least ``shortest`` as 'a<sep>b', the rest one
    by one: the list syntax shared by cron, robfig and systemd."""
    v = sorted(values)
    out: list[str] = []
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[j + 1] == v[j] + 1:
            j += 1
        if j - i + 1 >= shortest:
            out.append(f"{fmt(v[i])}{sep}{fmt(v[j])}")
        else:
            out += [fmt(n) for n in v[i:j + 1]]
        i = j + 1
    return out


def cron_field(values: Iterable[int], lo: int, hi: int, *, star_step: bool = True,
               shortest: int = 3) -> str:
    """A value set as a cron field, spelled the usual way: '*', '*/15' (only with star_step:
    a day field starting with '*' turns Debian cron's OR of the day fields into AND),
    '8-18/2', then ranges of ``shortest`` or more and single values."""
    vs = sorted(set(values))
    if vs == list(range(lo, hi + 1)):
        return "*"
    if len(vs) >= 3:
        step = vs[1] - vs[0]
        if step > 1 and all(b - a == step for a, b in zip(vs, vs[1:], strict=False)):
            if star_step and vs[0] == lo and vs[-1] + step > hi:
                return f"*/{step}"
            return f"{vs[0]}-{vs[-1]}/{step}"
    return ",".join(value_runs(vs, shortest=shortest))


def days_in_month(cron: Cron, month: int) -> frozenset[int]:
    """Days of the month the day-of-month field can match in ``month``."""
    return frozenset(d for d in cron.days if d <= MONTH_DAYS[month])


def parse_entry(text: str) -> Entry:
    if not isinstance(text, str):
        raise ValueError(f"expected a string, got {type(text).__name__}")
    stripped = text.strip()
    low = stripped.lower()
    if low == "@reboot":
        return Reboot()
    if low.startswith("@every"):
        arg = stripped[len("@every"):].strip()
        if not arg:
            raise ValueError("@every needs a duration, like '@every 15m'")
        seconds = parse_duration(arg)
        if seconds <= 0:
            raise ValueError("@every needs a duration above zero")
        return Every(seconds=seconds, text=f"@every {format_duration(seconds)}")
    if low in MACROS:
        cron = parse_cron(MACROS[low])
        return cron._replace(text=low)
    if low.startswith("@"):
        raise ValueError(f"unknown macro {stripped!r}; known: {', '.join([*MACROS, '@reboot', '@every <duration>'])}")
    return parse_cron(stripped)


def parse_schedule(value: object) -> tuple[Entry, ...]:
    """A schedule is one expression or a non-empty list of them (their union)."""
    items = value if isinstance(value, list) else [value]
    if not items:
        raise ValueError("the list of expressions is empty")
    entries: list[Entry] = []
    errors: list[str] = []
    for i, item in enumerate(items):
        try:
            entry = parse_entry(item)
        except ValueError as exc:
            errors.append(f"[{i}] {exc}" if isinstance(value, list) else str(exc))
            continue
        if entry not in entries:
            entries.append(entry)
    if errors:
        raise ValueError("; ".join(errors))
    if any(isinstance(e, Every) for e in entries) and len(entries) > 1:
        raise ValueError("@every cannot be combined with other expressions in one schedule")
    return tuple(entries)


def every_as_cron(seconds: int) -> str | None:
    """The cron step expression that fires every ``seconds``, if one does evenly."""
    if seconds % 60:
        return None
    minutes = seconds // 60
    if minutes < 60 and 60 % minutes == 0:
        return "* * * * *" if minutes == 1 else f"*/{minutes} * * * *"
    if minutes % 60 == 0 and 24 % (minutes // 60) == 0:
        hours = minutes // 60
        return "0 * * * *" if hours == 1 else ("0 0 * * *" if hours == 24 else f"0 */{hours} * * *")
    return None


def every_cron_problem(seconds: int) -> str | None:
    """Why no cron step expression fires every ``seconds`` (None when one does)."""
    if every_as_cron(seconds) is not None:
        return None
    text = format_duration(seconds)
    if seconds % 60:
        return f"@every {text} is not a whole number of minutes, and cron fires on minutes only"
    minutes = seconds // 60
    if minutes < 60:
        return (f"@every {text}: a minute step starts again at each hour, so */{minutes} would "
                f"fire at :00 and then {60 % minutes} minutes later; use a number of minutes "
                "that divides 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)")
    if minutes % 60:
        return (f"@every {text} is more than an hour but not a whole number of hours; a cron "
                "step is on one field (minutes or hours), so use whole hours")
    hours = minutes // 60
    if hours < 24:
        return (f"@every {text}: an hour step starts again each day, so */{hours} would fire "
                f"at 00:00 and then {24 % hours} hours later; use a number of hours that "
                "divides 24 (1, 2, 3, 4, 6, 8, 12, 24)")
    return f"@every {text} is longer than a day; cron has no step across days"
