"""Thin command line: parse options, call one function, map errors to exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from schedgen import __version__
from schedgen.config import config_path
from schedgen.errors import ConfigError, SchedgenError

app = typer.Typer(
    add_completion=True, no_args_is_help=True, pretty_exceptions_enable=False,
    help="Declarative scheduled jobs: one jobs.toml → launchd plists, crontab lines and "
         "bash wrappers with locks, queue claims, run records and log rotation.",
)

ConfigOpt = Annotated[Optional[str], typer.Option(  # noqa: UP007 (typer needs Optional)
    "-c", "--config", metavar="PATH",
    help="jobs.toml to read (default: ./jobs.toml, or $SCHEDGEN_CONFIG)")]
TargetOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP007
    "--target", "-t", metavar="NAME", help="launchd or cron; repeat for both (default: every target the config names)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="machine-readable output")]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"schedgen {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="print the version and exit")] = False,
) -> None:
    pass


def _targets(values: list[str] | None) -> tuple[str, ...] | None:
    if not values:
        return None
    for v in values:
        if v not in ("launchd", "cron"):
            raise SchedgenError(f"--target {v!r}: expected launchd or cron")
    return tuple(dict.fromkeys(values))


@app.command()
def validate(config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Load and check the config; list every problem, each naming the job and field."""
    from schedgen import commands

    path = config_path(config)
    try:
        loaded = commands.validate(path)
    except ConfigError as exc:
        if as_json:
            typer.echo(json.dumps({"valid": False, "config": str(path), "problems": [
                {"where": p.where, "message": p.message, "line": p.line} for p in exc.problems]},
                indent=2))
            raise typer.Exit(exc.exit_code) from None
        raise
    if as_json:
        typer.echo(json.dumps({"valid": True, "config": str(path),
                               "namespace": loaded.namespace,
                               "jobs": [j.name for j in loaded.jobs]}, indent=2))
    else:
        n = len(loaded.jobs)
        typer.echo(f"{path}: valid, {n} job{'s' if n != 1 else ''} in namespace {loaded.namespace!r}")


@app.command()
def render(
    out: Annotated[Path, typer.Option("--out", "-o", help="directory to write into")],
    config: ConfigOpt = None, target: TargetOpt = None,
    standalone: Annotated[bool, typer.Option(
        "--standalone", help="job files with the shared runtime inlined (each runs alone)")] = False,
) -> None:
    """Write the desired state as files: wrappers/ (job files and the shared runtime),
    launchd/, cron/crontab."""
    from schedgen import commands

    for p in commands.render(config_path(config), out, _targets(target), standalone):
        typer.echo(f"wrote {p}")


# --- install and reconcile: diff, apply, status/reconcile, uninstall
PruneOpt = Annotated[bool, typer.Option(
    "--prune", help="also remove owned artifacts whose job is gone from jobs.toml")]
ForceOpt = Annotated[bool, typer.Option(
    "--force", help="reload running jobs; overwrite files schedgen did not write; "
                    "prune hand-edited ones")]


@app.command("diff")
def diff_cmd(config: ConfigOpt = None, target: TargetOpt = None, prune: PruneOpt = False,
             force: ForceOpt = False, as_json: JsonOpt = False) -> None:
    """Show installed vs desired as unified diffs and a summary. Exit 0 in sync, 1 pending."""
    from schedgen import apply, report

    plan = apply.diff(config_path(config), _targets(target), prune=prune, force=force)
    if as_json:
        typer.echo(json.dumps(report.plan_json(plan), indent=2))
    else:
        typer.echo(report.diff_text(plan, report.use_color(sys.stdout)), nl=False)
    raise typer.Exit(0 if plan.in_sync else 1)


@app.command("apply")
def apply_cmd(
    config: ConfigOpt = None, target: TargetOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="say what would be done; "
                                          "change nothing")] = False,
    prune: PruneOpt = False, force: ForceOpt = False,
) -> None:
    """Make the machine match the config: wrappers, plists, the crontab block, reloads."""
    from schedgen import apply

    out = apply.apply(config_path(config), _targets(target), dry_run=dry_run, prune=prune,
                      force=force, say=typer.echo)
    if dry_run:
        typer.echo(f"dry run, nothing changed: namespace {out.plan.namespace}: "
                   f"{out.plan.summary()}")
    else:
        typer.echo(f"done: namespace {out.plan.namespace}: {out.plan.summary(done=True)}")


@app.command("status")
def status_cmd(
    config: ConfigOpt = None, target: TargetOpt = None, as_json: JsonOpt = False,
    check: Annotated[bool, typer.Option("--check", help="exit 1 if anything drifted")] = False,
) -> None:
    """Per job: installed, drifted, loaded/running, last run, next run, queue, lock."""
    from schedgen import status

    st = status.status(config_path(config), _targets(target))
    typer.echo(json.dumps(status.as_json(st), indent=2) if as_json else status.as_text(st))
    raise typer.Exit(1 if check and st.drifted else 0)


app.command("reconcile", help="Same as status (the name the design card uses).")(status_cmd)


@app.command("uninstall")
def uninstall_cmd(
    config: ConfigOpt = None,
    namespace: Annotated[Optional[str], typer.Option(  # noqa: UP007,UP045
        "--namespace", help="namespace to remove, without reading a config")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="say what would be removed")]
    = False,
) -> None:
    """Remove everything schedgen installed for the namespace; logs and run records stay."""
    from schedgen import apply

    out = apply.uninstall(config_path(config), namespace, dry_run=dry_run, say=typer.echo)
    n = len([c for c in out.plan.changes if c.action == "delete"])
    verb = "would remove" if dry_run else "removed"
    what = f"{verb} {n} artifact{'s' if n != 1 else ''}" if n else "nothing was installed"
    typer.echo(f"namespace {out.plan.namespace}: {what}")


# --- meeting users where they are: import, next, schema
@app.command("import")
def import_cmd(
    source: Annotated[str, typer.Option("--from", metavar="cron|launchd",
                                        help="read the crontab, or ~/Library/LaunchAgents")],
    file: Annotated[Optional[Path], typer.Option(  # noqa: UP007
        "--file", metavar="PATH",
        help="a crontab file instead of `crontab -l`; a plist or folder instead of "
             "~/Library/LaunchAgents")] = None,
    out: Annotated[Optional[Path], typer.Option(  # noqa: UP007
        "--out", "-o", metavar="FILE", help="write here instead of printing")] = None,
    force: Annotated[bool, typer.Option("--force", help="overwrite --out if it exists")] = False,
) -> None:
    """Turn hand-written crontab lines or plists into a jobs.toml that validates."""
    from schedgen.importing import run_import

    result = run_import(source, file, out, force)
    for note in result.notes:
        typer.echo(f"schedgen import: {note}", err=True)
    if out is None:
        typer.echo(result.text, nl=False)
    else:
        n = len(result.jobs)
        typer.echo(f"wrote {out} ({n} job{'s' if n != 1 else ''})", err=True)


@app.command("next")
def next_cmd(
    jobs: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP007
        metavar="[JOB]...", help="jobs to show (default: all)")] = None,
    count: Annotated[int, typer.Option("-n", min=1, help="how many times per job")] = 5,
    config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """The next firing times of each job in local time, with the schedule in words."""
    from schedgen import nexttimes
    from schedgen.config import load

    results = nexttimes.upcoming(load(config_path(config)), jobs, count)
    if as_json:
        typer.echo(json.dumps(nexttimes.as_json(results), indent=2))
    else:
        typer.echo(nexttimes.as_text(results))


@app.command("schema")
def schema_cmd() -> None:
    """Print the JSON Schema (draft 2020-12) of jobs.toml, for editors and CI."""
    from schedgen.schema import schema_text

    typer.echo(schema_text(), nl=False)


# --- run a job now
@app.command("run")
def run_cmd(
    job: Annotated[str, typer.Argument(metavar="JOB", help="the job to run")],
    smoke: Annotated[bool, typer.Option(
        "--smoke", help="run the job's smoke command, or only check its preconditions")] = False,
    config: ConfigOpt = None,
) -> None:
    """Run the job's wrapper now, in the foreground; exit with the wrapper's status."""
    from schedgen import runner

    raise typer.Exit(runner.run(config_path(config), job, smoke))


def main() -> None:
    try:
        app()
    except SchedgenError as exc:
        typer.echo(f"schedgen: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
