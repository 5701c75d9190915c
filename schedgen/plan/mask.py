"""Env values never appear in review output: file diffs show them masked, with the key.

Two nets, because a diff shows both the installed side (whose values the config may
no longer know) and the desired one:
- any line that sets a variable the way generated shell does (`export NAME=...`, or
  `NAME=...` for a key the config names) has its value replaced, whatever it is;
- in YAML (a CronJob's manifest, and `kubectl diff`), the `value:` line after a
  `- name: KEY` line for a key the config names has its value replaced, whatever it is;
- the heartbeat URL (`notify.ping_url`: whoever has it can ping as the job) and the
  webhook URL (`notify.webhook`: a Slack or Discord one is its own credential) are
  replaced on the job file's `sg_ping_url=` / `sg_webhook=` lines and wherever else;
- every env value the config holds (at least `MIN_VALUE` characters long, as written
  and as the wrapper quotes it) is replaced wherever else it occurs, except where it
  stands inside what the config says in public anyway (a job's name or description,
  which crontab comments and plist labels carry): `NALY_CHANNEL = "daily"` must not turn
  the job `publish-daily` into `publish-<masked>` all through the review, but is masked
  in `--channel daily`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable

MASK = "<masked>"
MIN_VALUE = 4  # shorter values ("1", "yes") would mask unrelated text; the line rule covers them
_SETTER = re.compile(r"^(?P<lead>[-+ ]?\s*(?:export\s+)?)(?P<key>[A-Za-z_][A-Za-z0-9_]*)=(?P<v>.*)$")
# Names the generated files set that are not the user's env (their values are no secret).
_OURS = re.compile(r"^(PATH|SCHEDGEN_[A-Z_]*|sg_[a-z0-9_]*)$")
_SECRET_OURS = frozenset({"sg_ping_url", "sg_webhook"})
# A container's env entry in YAML: `- name: KEY` then `value: ...` (kubectl sorts keys so).
_YAML_NAME = re.compile(r"^[-+ ]?\s*- name: (?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*$")
_YAML_VALUE = re.compile(r"^(?P<lead>[-+ ]?\s*value:)(?P<v>.*)$")


def _xml(text: str) -> str:
    # xml.sax.saxutils.escape would import urllib, http and ssl: 25 ms on every diff
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def masker(env_keys: Iterable[str], env_values: Iterable[str],
           public: Iterable[str] = (), secrets: Iterable[str] = ()) -> Callable[[str], str]:
    """A function that masks env values in a text (a diff, or a whole file); `secrets`
    (ping URLs) are masked wherever they occur, whatever their length."""
    keys = {k for k in env_keys if not _OURS.match(k)}
    forms: set[str] = set()
    for v in env_values:
        if len(v) >= MIN_VALUE:
            forms |= {v, shlex.quote(v), _xml(v)}
    for v in secrets:
        if v:
            forms |= {v, shlex.quote(v), _xml(v)}
    ordered = sorted(forms, key=len, reverse=True)  # the quoted form before the bare one
    values = re.compile("|".join(re.escape(f) for f in ordered)) if ordered else None
    # Every job's name and description in one pattern: made only when there are values
    # to mask (a diff of a config without env compiled it for nothing).
    said = sorted({t for t in public if t}, key=len, reverse=True) if values is not None else []
    names = re.compile("|".join(re.escape(t) for t in said)) if said else None

    def line(text: str) -> str:
        m = _SETTER.match(text)
        if m and (m.group("key") in keys or m.group("key") in _SECRET_OURS
                  or (m.group("lead").strip(" +-").startswith("export")
                      and not _OURS.match(m.group("key")))):
            return f"{m.group('lead')}{m.group('key')}={MASK}"
        if values is None:
            return text
        if names is None:
            return values.sub(MASK, text)
        spans = [m.span() for m in names.finditer(text)]

        def one(m: re.Match[str]) -> str:
            a, b = m.span()
            return m.group(0) if any(s <= a and b <= e for s, e in spans) else MASK

        return values.sub(one, text)

    def mask(text: str) -> str:
        if not text:
            return text
        out, named = [], False
        for t in text.split("\n"):
            v = _YAML_VALUE.match(t) if named else None
            out.append(f"{v.group('lead')} {MASK}" if v else line(t))
            n = _YAML_NAME.match(t)
            # the old value and the new one may follow one name line in a diff
            named = (n is not None and n.group("key") in keys) or (named and v is not None)
        return "\n".join(out)

    return mask
