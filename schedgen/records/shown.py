"""Text a job's command could have written, made safe to show.

Run IDs, items, outcomes and queue file names come from what runs leave behind, which
the job's command can write. Shown as they are, a name could retitle or clear a
terminal (ESC, BEL), add a row of its own (a newline) or stop the output (bytes that
are not UTF-8, read back as surrogates). Here such characters become visible escapes:
a byte that is not UTF-8 as \\xNN, ESC as \\e, a newline as \\n, any other control or
format character (C0, DEL, C1, bidi overrides, line separators) as \\xNN or \\uNNNN.
Printable text, the common case, is returned as it is.
"""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e", "\x07": "\\a", "\x08": "\\b"}


def shown(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(c: str) -> str:
    named = _NAMED.get(c)
    if named is not None:
        return named
    n = ord(c)
    if 0xDC80 <= n <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{n - 0xDC00:02x}"
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def field(value: object) -> str | None:
    """A string field of a record, shown safely; None when it is not a string."""
    return shown(value) if isinstance(value, str) else None
