"""Templates run without importing jinja2: importing it was a fifth of a first install.

jinja2 turns a template into Python (a `root` generator that yields the text), and that
code calls back into a small part of jinja2's runtime (its context, attribute lookup,
loops, macros, two built-in filters). This module keeps, per template, that code as
jinja2 made it (in the cache folder, beside jinja2's own compiled templates) and runs it
against a runtime of its own that does exactly that small part and nothing else. Anything
outside it (an undefined name, a filter or loop attribute it does not know, a call it
does not expect, any error at all) gives up on the fast path, and jinja2 renders that
artifact as before: the output is jinja2's either way.

The code is stored only after it rendered the very text jinja2 just did (and only by the
commands that write anyway: `apply`, `render`). It is keyed by the template's text,
jinja2's files, Python's version and the files that set the environment's options;
anything else in the file is ignored (then jinja2 renders, and a writing command stores
it afresh). Autoescaped templates (the plist) always go through jinja2.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable, Iterator
from importlib import util
from pathlib import Path
from typing import Any

from schedgen import cachefile
from schedgen.sha import sha256

Filters = dict[str, Callable[..., Any]]
Root = Callable[[dict[str, Any], Filters], str]

_PREFIX = "from jinja2.runtime import "  # the one line of jinja2's code not run here
_JINJA_FILES = ("__init__.py", "compiler.py", "environment.py", "runtime.py", "filters.py",
                "tests.py", "lexer.py", "parser.py", "optimizer.py", "nodes.py")
_OWN_FILES = (__file__, str(Path(__file__).with_name("artifacts.py")))


class Unsupported(Exception):
    """Outside what this runtime does: jinja2 renders this one."""


_MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "missing"})()


class _EvalContext:
    __slots__ = ("autoescape",)

    def __init__(self) -> None:
        self.autoescape = False


_EVAL = _EvalContext()


class _Context:
    """What the code asks of jinja2's Context: names (render's values; jinja2's globals
    are not here, so a template using one gives up), the names it sets, calls."""

    __slots__ = ("values", "vars", "exported_vars", "eval_ctx")

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values
        self.vars: dict[str, Any] = {}
        self.exported_vars: set[str] = set()
        self.eval_ctx = _EVAL

    def resolve_or_missing(self, key: str) -> Any:
        if key in self.vars:
            return self.vars[key]
        return self.values.get(key, _MISSING)

    def call(self, obj: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(obj, _Macro):
            raise Unsupported("a call of something other than a macro")
        return obj(*args, **kwargs)


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


_TESTS: Filters = {"string": _is_string}  # read only: one for every render


class _Env:
    """jinja2.Environment's part the code uses: filters, tests, attribute lookup."""

    __slots__ = ("filters", "tests")

    def __init__(self, filters: Filters) -> None:
        self.filters = filters
        self.tests = _TESTS

    @staticmethod
    def undefined(*_a: Any, **_k: Any) -> Any:
        raise Unsupported("an undefined value")  # StrictUndefined: jinja2 says which

    @staticmethod
    def concat(parts: Any) -> str:
        return "".join(parts)

    @staticmethod
    def getattr(obj: Any, attribute: str) -> Any:
        """As jinja2.Environment.getattr: the attribute, else the item."""
        try:
            return getattr(obj, attribute)
        except AttributeError:
            pass
        try:
            return obj[attribute]
        except (TypeError, LookupError, AttributeError):
            raise Unsupported(f"no attribute {attribute!r}") from None


class _Empty:
    """jinja2's plain Undefined where an inline if has no else: it prints as nothing."""

    __slots__ = ()

    def __init__(self, *_a: Any, **_k: Any) -> None:
        pass

    def __str__(self) -> str:
        return ""

    def _other(self, *_a: Any) -> Any:
        raise Unsupported("an inline if without else used other than printed")

    __bool__ = __iter__ = __len__ = __eq__ = __add__ = __radd__ = _other
    __hash__ = None  # type: ignore[assignment]


class _Loop:
    """jinja2's LoopContext, for `loop.first`, `loop.last`, `loop.index`, `loop.index0`."""

    __slots__ = ("_it", "_next", "index0")

    def __init__(self, iterable: Any, _undefined: Any, *rest: Any, **kw: Any) -> None:
        if rest or kw:
            raise Unsupported("a recursive loop")
        self._it = iter(iterable)
        self._next = next(self._it, _MISSING)
        self.index0 = -1

    def __iter__(self) -> Iterator[tuple[Any, _Loop]]:
        return self

    def __next__(self) -> tuple[Any, _Loop]:
        item = self._next
        if item is _MISSING:
            raise StopIteration
        self._next = next(self._it, _MISSING)
        self.index0 += 1
        return item, self

    @property
    def last(self) -> bool:
        return self._next is _MISSING

    @property
    def first(self) -> bool:
        return self.index0 == 0

    @property
    def index(self) -> int:
        return self.index0 + 1


class _Macro:
    """A macro called with all its arguments, positionally, nothing else."""

    __slots__ = ("_func", "_count")

    def __init__(self, _env: Any, func: Callable[..., str], _name: str, arguments: tuple[str, ...],
                 catch_kwargs: bool, catch_varargs: bool, caller: bool,
                 default_autoescape: bool | None = None) -> None:
        if catch_kwargs or catch_varargs or caller or default_autoescape:
            raise Unsupported("a macro with kwargs, varargs, caller or escaping")
        self._func, self._count = func, len(arguments)

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        if kwargs or len(args) != self._count:
            raise Unsupported("a macro called with defaults or keywords")
        return self._func(*args)


def _join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
    """jinja2's `join` without autoescape."""
    if eval_ctx is not _EVAL or attribute is not None:
        raise Unsupported("join with an attribute")
    return str(d).join(map(str, value))


def _string(value: Any) -> str:
    """jinja2's `string` (soft_str)."""
    return value if isinstance(value, str) else str(value)


def _internalcode(f: Any) -> Any:
    return f


class _RuntimeError(Exception):
    pass


BUILTIN_FILTERS: Filters = {"join": _join, "string": _string}


def _namespace() -> dict[str, Any]:
    return {"missing": _MISSING, "Undefined": _Empty, "LoopContext": _Loop, "Macro": _Macro,
            "internalcode": _internalcode, "TemplateRuntimeError": _RuntimeError,
            "environment": None}


def runner(code: Any) -> Root:
    """The render function of a template's code (as `code_of` makes it)."""
    ns = _namespace()
    exec(code, ns)  # noqa: S102  jinja2's code of a shipped template, as jinja2 runs it
    root = ns.get("root")
    if not callable(root):
        raise Unsupported("no root function")

    def render(values: dict[str, Any], filters: Filters) -> str:
        try:
            return "".join(root(_Context(values), _MISSING, _Env(filters)))
        except Unsupported:
            raise
        except Exception as exc:  # noqa: BLE001  jinja2 renders it, and reports it if it must
            raise Unsupported(f"{type(exc).__name__}: {exc}") from None

    return render


def code_of(raw: str, name: str) -> Any:
    """jinja2's Python for a template (Environment.compile(raw=True)), compiled to run here;
    None if it does not start with the import this module stands in for."""
    head, nl, body = raw.partition("\n")
    if not nl or not head.startswith(_PREFIX):
        return None
    # The same line numbers as jinja2's (its tracebacks' debug_info): the import as a blank.
    return compile("\n" + body, f"<template {name}>", "exec")


def key(name: str, source: str) -> str:
    """What a template's code depends on: its text, jinja2's code generator and runtime,
    Python (marshal's format and the bytecode), and the environment's options (their
    files)."""
    h = sha256(f"{name}\0{source}\0{sys.version}\0{sys.implementation.cache_tag}"
                       .encode("utf-8", "surrogateescape"))
    files = list(_OWN_FILES)
    spec = util.find_spec("jinja2")  # found, not imported
    for place in (spec.submodule_search_locations or ()) if spec is not None else ():
        files += [os.path.join(place, f) for f in _JINJA_FILES]
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            h.update(f"\0{f}\0-".encode("utf-8", "surrogateescape"))
            continue
        h.update(f"\0{f}\0{st.st_size}\0{st.st_mtime_ns}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def file_of(folder: Path, name: str) -> Path:
    return folder / f"{name}.code"


def load(folder: Path, name: str, want: str) -> Root | None:
    """The stored code of `name`, if it was stored under the key `want`."""
    data = cachefile.read(file_of(folder, name))
    if data is None:
        return None
    body = cachefile.unseal(data, want)  # a byte changed on disk: not run
    if body is None:
        return None
    try:
        return runner(marshal.loads(body))
    except Exception:  # noqa: BLE001  damaged: jinja2 renders, a writing command stores anew
        return None


def store(folder: Path, name: str, want: str, code: Any) -> None:
    """Never fails a command: a cache that cannot be written only costs time."""
    cachefile.write(folder, file_of(folder, name).name, cachefile.seal(want, marshal.dumps(code)))
