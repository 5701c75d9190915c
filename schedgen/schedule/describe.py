"""Schedules as sentences, for people: `next`, `status`, crontab and plist comments.

The text depends only on the expression (never on the clock or the time zone), so
rendered files stay deterministic. Cron text comes from cronsim's explainer, which
follows Debian's day-of-month/day-of-week rules; cron-descriptor is the fallback.
Both are imported inside the functions, so `validate` never loads them.
"""

from __future__ import annotations

import re

from schedgen.schedule.expressions import MACROS, Cron, Entry, Every, Reboot

_UNITS = (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))
# Cron expressions already put in words, by expression: the describers cost a `diff`
# more to load than everything else they do. render/wordcache.py keeps it between runs.
KNOWN: dict[str, str] = {}


def describe_zoned(entries: tuple[Entry, ...] | list[Entry], zone: str | None) -> str:
    """The schedule in words, naming the zone it is read in when it has one."""
    text = describe_entries(entries)
    return f"{text}, {zone} time" if zone else text


def describe_entries(entries: tuple[Entry, ...] | list[Entry]) -> str:
    """A whole schedule in one line, e.g. ``At 06:15 every day``."""
    parts = [describe_entry(e) for e in entries]
    if not parts:
        return "Never"
    return "; ".join([parts[0], *(_lower_first(p) for p in parts[1:])])


def describe_entry(entry: Entry) -> str:
    if isinstance(entry, Reboot):
        return "At boot"
    if isinstance(entry, Every):
        return f"Every {_span(entry.seconds)}"
    return describe_cron(entry)


def describe_cron(cron: Cron | str) -> str:
    text = cron.text if isinstance(cron, Cron) else cron
    expr = MACROS.get(text.lower(), text)
    known = KNOWN.get(expr)
    if known is None:
        known = KNOWN[expr] = _explain(expr)
    return known


def _explain(expr: str) -> str:
    for explain in (_cronsim, _cron_descriptor):
        try:
            out = explain(expr)
        except Exception:  # noqa: BLE001 - a describer failing must never break a render
            continue
        if out and "\n" not in out:
            return out
    return expr


def _cronsim(expr: str) -> str:
    from cronsim.explain import Expression

    e = Expression(expr.upper().split())
    out = e.explain()
    parts = expr.split()
    if not (parts[2].startswith("*") or parts[4].startswith("*")):
        # Both day fields restricted: cron fires when EITHER matches. cronsim says
        # "on the 1st day of month and on Monday"; make the OR plain.
        out = out.replace(f" {e.day} and {e.dow}", f" {e.day}, or {e.dow}")
    # cronsim writes "every fifth minute" but "every 10th minute": one style, numerals
    return _ORDINAL.sub(lambda m: f"{m.group(1)} {_ORDINALS[m.group(2).lower()]}", str(out))


_ORDINALS = {w: f"{n}{'nd' if n == 2 else 'rd' if n == 3 else 'th'}" for n, w in enumerate(
    ("second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"), 2)}
_ORDINAL = re.compile(r"\b([Ee]very) (" + "|".join(_ORDINALS) + r")\b")


def _cron_descriptor(expr: str) -> str:
    from cron_descriptor import ExpressionDescriptor, Options

    options = Options(locale_code="en", use_24hour_time_format=True)
    return str(ExpressionDescriptor(expr, options).get_description())


def _span(seconds: int) -> str:
    """90 → "1 minute 30 seconds", 900 → "15 minutes", 3600 → "hour"."""
    parts = []
    for unit, size in _UNITS:
        n, seconds = divmod(seconds, size)
        if n:
            parts.append(f"{n} {unit}{'s' if n != 1 else ''}")
    if len(parts) == 1 and parts[0].startswith("1 "):
        return parts[0][2:]
    return " ".join(parts)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]
