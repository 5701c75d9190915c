"""The package reads like the data flow: stages in order, no cycles, no hidden imports.

Every module of schedgen belongs to a stage; a stage imports only stages before it
(docs/design.md, "The package, stage by stage"). Imports inside functions count too, so they cannot hide a cycle, and
only cli.py may import lazily (it loads the one command it runs, for start-up time),
apart from the few pairs in LAZY_EDGES (code only some configs need) and a target's
folder, which loads its own parts when it is asked for them. Imports under
`if TYPE_CHECKING:` are for the type checker only and load nothing.

A target (schedgen/targets/<name>/) is a plug-in: nothing outside its folder imports
it; everything reaches it through the registry, by name.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import schedgen

ROOT = Path(schedgen.__file__).parent
# The order of the stages. Stages of the same rank may not import each other.
RANK = {
    "base": 0,  # errors, paths, units, the version
    "schedule": 1,  # the cron language on its own
    "registry": 1,  # which targets exist, and the shape they have (names, no code)
    "config": 2,  # jobs.toml into the model
    "render": 3,  # config -> desired artifacts
    "records": 3,  # what the wrappers leave behind
    "machine": 3,  # commands, atomic writes, the ownership record
    "doctor": 3,  # `doctor`'s check record and the checks every target shares
    "plan": 4,  # desired vs installed, and carrying it out
    "targets": 5,  # what the targets share: whole files planned, the job files
    "importers": 6,  # crontab lines and plists -> jobs.toml
    "outcomes": 6,  # what the run records say happened: history, missed firings
    "commands": 7,  # one module per verb
    "target": 7.5,  # one folder per target: all it means, loaded through the registry
    "output": 8,  # text and JSON of the commands' results
    "cli": 9,
}
BASE = {"schedgen", "schedgen.cachefile", "schedgen.errors", "schedgen.paths", "schedgen.sha",
        "schedgen.units"}
# the completion callbacks are the cli's too: they load a config only while the shell asks
# quick.py (the entry point) loads cli.py only for what it does not read itself, and
# verbs.py (the bodies both run) the one command it runs
LAZY_ALLOWED = {"schedgen.cli", "schedgen.completion", "schedgen.quick", "schedgen.verbs"}
# Besides the cli, these imports alone may sit inside a function, each so that a command
# does not load, at every start, code that only some configs use (a cron-only `diff`
# never needs launchd, systemd, kubernetes or time-zone code). Pairs, not modules: any
# other import there is still refused, and these still count as edges for the cycle and
# rank checks (they are edges like every other import).
LAZY_EDGES = {
    ("schedgen.config.load", "schedgen.config.kubernetes"): "configs with kubernetes jobs only",
    ("schedgen.render.artifacts", "schedgen.render.tzrender"): "zoned jobs and catch-ups only",
    ("schedgen.render.artifacts", "schedgen.render.retry"): "jobs with retries only",
}
REGISTRY = {"schedgen.targets.registry", "schedgen.targets.interface"}
CLI_ONLY = ("typer", "click")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def folder(module: str) -> str | None:
    """The target folder a module is in (schedgen.targets.NAME), if it is in one."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] == "targets" and (ROOT / "targets" / parts[2]).is_dir():
        return ".".join(parts[:3])
    return None


def stage(module: str) -> str:
    if module in BASE:
        return "base"
    if module in ("schedgen.cli", "schedgen.__main__", "schedgen.error_handler",
                  "schedgen.completion", "schedgen.quick", "schedgen.verbs"):
        return "cli"
    if module in REGISTRY:
        return "registry"
    if folder(module):
        return "target"
    return module.split(".")[1]


class Import:
    def __init__(self, source: str, target: str, line: int, nested: bool):
        self.source, self.target, self.line, self.nested = source, target, line, nested

    def __repr__(self) -> str:
        return f"{self.source}:{self.line} -> {self.target}"


def imports(modules: dict[str, ast.Module]) -> list[Import]:
    """Every import of a schedgen module, resolved to the module it loads."""
    out: list[Import] = []

    def visit(name: str, node: ast.AST, nested: bool) -> None:
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from schedgen.plan import changes` loads the submodule when there is one.
            targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules
                       else node.module for a in node.names]
        elif _type_checking(node):
            return  # for the type checker only: no import at run time
        else:
            # One walk of the tree: what sits under a function is nested.
            inner = nested or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            for child in ast.iter_child_nodes(node):
                visit(name, child, inner)
            return
        out.extend(Import(name, t, node.lineno, nested) for t in targets)

    for name, tree in modules.items():
        visit(name, tree, False)
    return out


def _type_checking(node: ast.AST) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING")


def cycles(edges: list[Import]) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for e in edges:
        if e.target.startswith("schedgen") and e.target != e.source:
            graph.setdefault(e.source, set()).add(e.target)
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def upward(edges: list[Import]) -> list[Import]:
    bad = []
    for e in edges:
        if not e.target.startswith("schedgen"):
            continue
        a, b = stage(e.source), stage(e.target)
        if a != b and RANK[b] >= RANK[a]:
            bad.append(e)
    return bad


def parse_package() -> dict[str, ast.Module]:
    return {module_name(p): ast.parse(p.read_text(encoding="utf-8"), str(p))
            for p in sorted(ROOT.rglob("*.py"))}


# Parsed when a test asks (not at collection, which every worker does).
@functools.cache
def _package() -> tuple[dict[str, ast.Module], list[Import]]:
    modules = parse_package()
    return modules, imports(modules)


@pytest.fixture
def modules() -> dict[str, ast.Module]:
    return _package()[0]


@pytest.fixture
def edges() -> list[Import]:
    return _package()[1]


def test_every_module_is_in_a_known_stage(modules: dict[str, ast.Module]) -> None:
    unknown = sorted(m for m in modules if stage(m) not in RANK)
    assert not unknown, f"place these in RANK (tests/test_layout.py): {unknown}"


def test_no_import_cycles(edges: list[Import]) -> None:
    assert cycles(edges) == []


def test_no_stage_imports_a_later_one(edges: list[Import]) -> None:
    assert upward(edges) == []


def test_no_imports_inside_functions_outside_the_cli(edges: list[Import]) -> None:
    hidden = [e for e in edges if e.nested and e.target.startswith("schedgen")
              and e.source not in LAZY_ALLOWED and (e.source, e.target) not in LAZY_EDGES
              and folder(e.source) is None]
    assert hidden == []


def test_nothing_outside_a_target_folder_imports_it(edges: list[Import]) -> None:
    bad = [e for e in edges if folder(e.target) and folder(e.target) != folder(e.source)]
    assert bad == []


def test_the_registry_names_every_target_folder_and_only_them() -> None:
    from schedgen.targets import registry

    folders = sorted(p.name for p in (ROOT / "targets").iterdir()
                     if (p / "__init__.py").is_file())
    assert sorted(e.module.rsplit(".", 1)[1] for e in registry.ENTRIES) == folders
    assert all(e.module == f"schedgen.targets.{e.name}" for e in registry.ENTRIES)


def test_every_lazy_edge_allowed_is_one_the_code_has(edges: list[Import]) -> None:
    nested = {(e.source, e.target) for e in edges if e.nested}
    assert sorted(set(LAZY_EDGES) - nested) == []


def test_only_the_cli_knows_the_cli_library(edges: list[Import]) -> None:
    bad = [e for e in edges if e.target.split(".")[0] in CLI_ONLY and stage(e.source) != "cli"]
    assert bad == []


# The checks themselves, on graphs that break the rules.
def _graph(source: str) -> list[Import]:
    modules: dict[str, ast.Module] = {}
    for block in source.strip().split("\n\n"):
        name, _, body = block.partition("\n")
        modules[name.strip("# ")] = ast.parse(body)
    return imports(modules)


def test_the_checks_find_a_cycle_hidden_in_a_function() -> None:
    edges = _graph("""
# schedgen.plan.changes
def build():
    from schedgen.targets.base import x

# schedgen.targets.base
from schedgen.plan import changes
""")
    assert cycles(edges) == [["schedgen.plan.changes", "schedgen.targets.base",
                              "schedgen.plan.changes"]]
    assert [e.nested for e in edges] == [True, False]


@pytest.mark.parametrize("source, target", [
    ("schedgen.config.load", "schedgen.render.artifacts"),  # a later stage
    ("schedgen.render.artifacts", "schedgen.machine.ops"),  # same rank, other stage
    ("schedgen.schedule.describe", "schedgen.config.model"),
])
def test_the_checks_find_an_upward_import(source: str, target: str) -> None:
    pkg, _, mod = target.rpartition(".")
    edges = _graph(f"# {source}\nfrom {pkg} import {mod}\n\n# {target}\nX = 1\n")
    assert [(e.source, e.target) for e in upward(edges)] == [(source, target)]
