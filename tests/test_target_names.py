"""A target's name is said in its own folder: outside schedgen/targets/ it appears only
in the few places listed here (the registry is inside the folder and lists them all)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import schedgen
from schedgen.targets import registry

ROOT = Path(schedgen.__file__).parent
NAMES = {e.name for e in registry.ENTRIES}
# (module, name): how many times it may appear there, and why.
ALLOWED = {
    ("schedgen/paths.py", "launchd"): 1,  # the default target on macOS
    ("schedgen/paths.py", "cron"): 1,  # ...and elsewhere
    ("schedgen/config/defaults.py", "kubernetes"): 1,  # the [kubernetes] table of a job
}


def literals(root: Path) -> Counter[tuple[str, str]]:
    """Every string literal equal to a target name, per module, outside the targets folder."""
    found: Counter[tuple[str, str]] = Counter()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        if rel.startswith("schedgen/targets/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in NAMES:
                found[(rel, str(node.value))] += 1
    return found


def test_target_names_appear_outside_the_targets_folder_only_where_allowed() -> None:
    found = literals(ROOT)
    over = {k: n for k, n in found.items() if n > ALLOWED.get(k, 0)}
    assert over == {}, "say it in the target's folder, or ask the registry"
    assert sum(ALLOWED.values()) <= 5 and len({m for m, _ in ALLOWED}) <= 5


def test_every_allowed_place_is_still_used() -> None:
    assert set(literals(ROOT)) == set(ALLOWED)


def test_the_count_finds_a_name_in_a_new_module(tmp_path: Path) -> None:
    pkg = tmp_path / "schedgen"
    (pkg / "targets" / "cron").mkdir(parents=True)
    (pkg / "render").mkdir()
    (pkg / "render" / "x.py").write_text('if t == "cron" or "systemd" in job.targets:\n    pass\n'
                                         'DOC = f"{t} is not cron"\n')
    (pkg / "targets" / "cron" / "fit.py").write_text('NAME = "cron"\n')
    assert literals(pkg) == {("schedgen/render/x.py", "cron"): 1,
                             ("schedgen/render/x.py", "systemd"): 1}
