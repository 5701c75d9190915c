"""Thin command line: parse options, call one function, map errors to exit codes."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from schedgen import __version__, completion, error_handler, verbs
from schedgen.config.discover import config_path
from schedgen.errors import (
    EXIT_OK,
    EXIT_UNKNOWN,
    ConfigError,
    SchedgenError,
)
from schedgen.targets import registry

app = typer.Typer(
    add_completion=True, no_args_is_help=True, pretty_exceptions_enable=False,
    help="Declarative scheduled jobs: one jobs.toml → launchd plists, crontab lines and "
         "bash wrappers with locks, queue claims, run records and log rotation.",
)

ConfigOpt = Annotated[Optional[str], typer.Option(  # noqa: UP007 (typer needs Optional)
    "-c", "--config", metavar="PATH",
    help="jobs.toml to read (default: $SCHEDGEN_CONFIG, else ./jobs.toml, else the one the "
         "last apply recorded)")]
TargetOpt = Annotated[Optional[list[str]], typer.Option(  # noqa: UP007
    "--target", "-t", metavar="NAME", autocompletion=completion.targets, help=f"{', '.join(registry.names())}; repeatable (default: every target the config names)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="machine-readable output")]
HostOpt = Annotated[Optional[str], typer.Option(  # noqa: UP007
    "--host", metavar="NAME",
    help="the jobs whose `hosts` match NAME (another machine's short host name) instead "
         "of this machine's ($SCHEDGEN_HOST, else the host name up to the first dot); "
         "targets stay this machine's defaults")]


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


_targets = verbs.targets
_quiet = verbs.quiet
_outcome_json = verbs.outcome_json


@app.command()
def validate(config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Load and check the config; list every problem, each naming the job and field."""
    from schedgen.commands.validate import validate
    from schedgen.output import validate as out

    path = config_path(config)
    try:
        loaded = validate(path)
    except ConfigError as exc:
        if as_json:
            typer.echo(json.dumps(out.invalid_json(path, exc), indent=2))
            raise typer.Exit(exc.exit_code) from None
        raise
    typer.echo(json.dumps(out.valid_json(path, loaded), indent=2) if as_json
               else out.valid_text(path, loaded))


@app.command()
def render(
    out: Annotated[Path, typer.Option("--out", "-o", help="directory to write into")],
    config: ConfigOpt = None, target: TargetOpt = None,
    standalone: Annotated[bool, typer.Option(
        "--standalone", help="job files with the shared runtime inlined (each runs alone)")] = False,
    host: HostOpt = None,
) -> None:
    """Write the desired state as files: wrappers/ (job files and the shared runtime),
    launchd/, cron/crontab, systemd/, kubernetes/.
    --target T renders T for every job (plists of a Mac's config, on any host);
    --host NAME the jobs another machine gets (those its `hosts` leave out are named)."""
    from schedgen.commands import render as commands

    for p in commands.render(config_path(config), out, _targets(target),
                             say=lambda line: typer.echo(line, err=True), standalone=standalone,
                             host=host):
        typer.echo(f"wrote {p}")


# --- install and reconcile: diff, apply, status/reconcile, uninstall
PruneOpt = Annotated[bool, typer.Option(
    "--prune", help="also remove owned artifacts whose job is gone from jobs.toml")]
ForceOpt = Annotated[bool, typer.Option(
    "--force", help="reload running jobs; overwrite files schedgen did not write; "
                    "prune hand-edited ones")]


@app.command("diff")
def diff_cmd(config: ConfigOpt = None, target: TargetOpt = None, prune: PruneOpt = False,
             force: ForceOpt = False, as_json: JsonOpt = False,
             stat: Annotated[bool, typer.Option(
                 "--stat", help="per job what changed, then file names only")] = False,
             full: Annotated[bool, typer.Option(
                 "--full", "-v", help="new files in whole, not one line each")] = False,
             host: HostOpt = None) -> None:
    """Per job what changed in jobs.toml terms, then the files: a new one in one line
    (what it is, where, its size; --full shows its text), a changed one as hunks, env
    values masked. Names the jobs whose `hosts` skip this host, and why.
    --host NAME: the plan as if this machine were NAME, against what is installed here.
    Exit 0 in sync, 1 pending."""
    raise typer.Exit(verbs.diff(typer.echo, config, target, prune, force, as_json, stat, full,
                                host))


@app.command("apply")
def apply_cmd(
    config: ConfigOpt = None, target: TargetOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="say what would be done; "
                                          "change nothing")] = False,
    prune: PruneOpt = False, force: ForceOpt = False, as_json: JsonOpt = False,
) -> None:
    """Make the machine match the config: wrappers, plists, the crontab block, reloads.
    Installs the jobs whose `hosts` match this host and removes what it installed for
    jobs that no longer match.

    Jobs with scope = "system" go to /etc/cron.d, LaunchDaemons or system units; only root may apply them (run by another user, apply changes nothing: exit 2)."""
    raise typer.Exit(verbs.apply(typer.echo, config, target, dry_run, prune, force, as_json))


@app.command("status")
def status_cmd(
    config: ConfigOpt = None, target: TargetOpt = None, as_json: JsonOpt = False,
    check: Annotated[bool, typer.Option("--check", help="exit 1 if anything drifted")] = False,
    host: HostOpt = None,
) -> None:
    """Per job: installed, drifted, loaded/running, last run, next run, queue, lock.
    Exit 0; with --check 1 on drift; 4 when a scheduler could not be read (no crontab
    on PATH, no cluster): its jobs' state is unknown and no drift is claimed for them.
    --host NAME of another machine: its jobs, schedules and next runs only (what is
    installed there cannot be read from here); not with --check."""
    raise typer.Exit(verbs.status(typer.echo, config, target, as_json, check, host))


app.command("reconcile", help="Same as status: what is installed against jobs.toml.")(status_cmd)


@app.command("uninstall")
def uninstall_cmd(
    config: ConfigOpt = None,
    namespace: Annotated[Optional[str], typer.Option(  # noqa: UP007,UP045
        "--namespace", help="namespace to remove, without reading a config")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="say what would be removed")]
    = False, as_json: JsonOpt = False,
) -> None:
    """Remove everything schedgen installed for the namespace; logs and run records stay."""
    from schedgen.commands import apply

    path = Path(config or "jobs.toml") if namespace else config_path(config)
    say = verbs.Steady(typer.echo)
    out = apply.uninstall(path, namespace, dry_run=dry_run, say=_quiet if as_json else say)
    say.done()
    if as_json:
        typer.echo(json.dumps(_outcome_json(out), indent=2))
        return
    n = len([c for c in out.plan.changes if c.action == "delete"])
    verb = "would remove" if dry_run else "removed"
    what = f"{verb} {n} artifact{'s' if n != 1 else ''}" if n else "nothing was installed"
    typer.echo(f"namespace {out.plan.namespace}: {what}")


# --- meeting users where they are: import, next, schema
@app.command("import")
def import_cmd(
    source: Annotated[str, typer.Option("--from", metavar="cron|launchd|systemd",
                                        help="read the crontab, ~/Library/LaunchAgents, or "
                                             "~/.config/systemd/user")],
    file: Annotated[Optional[Path], typer.Option(  # noqa: UP007
        "--file", metavar="PATH",
        help="a crontab file instead of `crontab -l`; a plist, a .timer or a folder "
             "instead of the default folder")] = None,
    out: Annotated[Optional[Path], typer.Option(  # noqa: UP007
        "--out", "-o", metavar="FILE", help="write here instead of printing")] = None,
    force: Annotated[bool, typer.Option("--force", help="overwrite --out if it exists")] = False,
    system: Annotated[bool, typer.Option(
        "--system", help="a system crontab: a user name before each command (default file: "
                         "/etc/crontab); found by itself for /etc/crontab, /etc/cron.d and a "
                         "header that names the user column. Its lines, and the plists of a "
                         "LaunchDaemons folder, become scope = \"system\" jobs run as their "
                         "user")] = False,
    no_lock: Annotated[bool, typer.Option(
        "--no-lock", help="write `lock = false`: runs may overlap, as they could before")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Turn hand-written crontab lines, plists or systemd timers into a jobs.toml that validates."""
    from schedgen.commands.import_jobs import run_import

    result = run_import(source, file, out, force, system=system, lock=not no_lock)
    if as_json:  # the jobs.toml text inside, unless it went to --out
        typer.echo(json.dumps({
            "from": source, "jobs": list(result.jobs), "out": str(out) if out else None,
            "origins": [{"job": j, "from": w} for j, w in result.origins],
            "notes": [str(n) for n in result.notes],
            "text": None if out else result.text}, indent=2))
        return
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
        metavar="[JOB]...", autocompletion=completion.jobs,
        help="jobs to show (default: all)")] = None,
    count: Annotated[int, typer.Option("-n", min=1, help="how many times per job")] = 5,
    config: ConfigOpt = None, as_json: JsonOpt = False, host: HostOpt = None,
) -> None:
    """The next firing times of each job in local time, with the schedule in words.
    Only the jobs for this host (`hosts`); --host NAME: another machine's."""
    from schedgen.commands.next import next_cmd
    from schedgen.output import next as out

    results = next_cmd(config_path(config), jobs, count, host)
    typer.echo(json.dumps(out.as_json(results), indent=2) if as_json else out.as_text(results))


@app.command("schema")
def schema_cmd() -> None:
    """Print the JSON Schema (draft 2020-12) of jobs.toml, for editors and CI."""
    from schedgen.config.schema import schema_text

    typer.echo(schema_text(), nl=False)


# --- run a job now
@app.command("run")
def run_cmd(
    job: Annotated[str, typer.Argument(metavar="JOB", autocompletion=completion.jobs,
                                                  help="the job to run")],
    smoke: Annotated[bool, typer.Option(
        "--smoke", help="run the job's smoke command, or only check its preconditions")] = False,
    config: ConfigOpt = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="after the run, its record as JSON (the job's own stdout goes to "
                       "stderr)")] = False,
) -> None:
    """Run the job's wrapper now, in the foreground; exit with the wrapper's status."""
    from schedgen.commands.run import last_run_json, run

    path = config_path(config)
    status = run(path, job, smoke, quiet_stdout=as_json)
    if as_json:
        typer.echo(json.dumps(last_run_json(path, job, status), indent=2))
    raise typer.Exit(status)


@app.command("pause")
def pause_cmd(
    jobs: Annotated[list[str], typer.Argument(metavar="JOB...", autocompletion=completion.jobs,
                                              help="the jobs to pause")],
    until: Annotated[Optional[str], typer.Option(  # noqa: UP007
        "--until", metavar="TIME", help="end the pause at this time (2026-12-24T08:00, the "
                                        "host's local time unless an offset is given)")] = None,
    config: ConfigOpt = None,
) -> None:
    """Pause jobs: they stay installed, each firing is skipped (recorded, not missed)."""
    from schedgen.commands.pause import pause

    raise typer.Exit(pause(config_path(config), jobs, until, say=typer.echo))


@app.command("resume")
def resume_cmd(
    jobs: Annotated[list[str], typer.Argument(metavar="JOB...", autocompletion=completion.jobs,
                                              help="the jobs to resume")],
    config: ConfigOpt = None,
) -> None:
    """Resume paused jobs: their next firing runs."""
    from schedgen.commands.pause import resume

    raise typer.Exit(resume(config_path(config), jobs, say=typer.echo))


@app.command("doctor")
def doctor_cmd(
    jobs: Annotated[Optional[list[str]], typer.Argument(  # noqa: UP007
        metavar="[JOB]...", autocompletion=completion.jobs,
        help="jobs to check (default: all)")] = None,
    config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """What would make a job fail silently on this host, each check with its verdict and
    what to do: exit 0 all fine, 1 problems found."""
    from schedgen.commands import doctor as dr
    from schedgen.config import load as cfg

    path = config_path(config)
    checks = dr.doctor(path, jobs)
    if as_json:
        typer.echo(json.dumps(dr.as_json(checks), indent=2))
    else:
        targets = {j.name: j.targets for j in cfg.load(path).jobs}
        typer.echo(dr.as_text(checks, targets))
    raise typer.Exit(1 if dr.counts(checks)[0] else 0)


# --- outcomes: history, logs, check, report (schedgen/outcomes/, commands/)
JobsArg = Annotated[Optional[list[str]], typer.Argument(  # noqa: UP007
    metavar="[JOB]...", autocompletion=completion.jobs, help="jobs to show (default: all)")]


@app.command("history")
def history_cmd(
    jobs: JobsArg = None,
    count: Annotated[Optional[int], typer.Option(  # noqa: UP007
        "-n", help="runs per job (default 20, or all within --since)")] = None,
    since: Annotated[Optional[str], typer.Option(  # noqa: UP007
        "--since", metavar="DUR", help="only runs that began within DUR, like 2d or 6h")] = None,
    config: ConfigOpt = None, as_json: JsonOpt = False,
) -> None:
    """One line per run, newest first: run ID, start (local), duration, outcome, exit,
    attempt n/m (jobs with retries), item; missed firings as rows of their own."""
    from schedgen.commands import history as show

    hs = show.job_history(config_path(config), jobs, count, since)
    typer.echo(json.dumps(show.history_json(hs), indent=2) if as_json else show.history_text(hs))


@app.command("metrics")
def metrics_cmd(
    job: Annotated[Optional[str], typer.Argument(  # noqa: UP007
        metavar="[JOB]", help="one job (default: every job)")] = None,
    out: Annotated[Optional[str], typer.Option(  # noqa: UP007
        "--out", metavar="DIR", help="also write each job's missed and next firing to "
        "DIR/schedgen-schedule_<namespace>_<job>.prom (for node_exporter's textfile "
        "collector; the run counters are the wrapper's own file)")] = None,
    config: ConfigOpt = None,
) -> None:
    """The jobs' metrics in the Prometheus text format: last start, success, failure,
    duration and exit code, runs by outcome, lock busy count, queue depth, missed firings
    (last 7 days), next firing (docs/outcomes.md, Metrics)."""
    from pathlib import Path

    from schedgen.commands.metrics import metrics_cmd as collect

    typer.echo(collect(config_path(config), job, Path(out) if out else None), nl=False)


@app.command("logs")
def logs_cmd(
    job: Annotated[str, typer.Argument(metavar="JOB", autocompletion=completion.jobs,
                                                  help="the job")],
    run_id: Annotated[Optional[str], typer.Argument(  # noqa: UP007
        metavar="[RUN_ID]", autocompletion=completion.run_ids, help="a run ID or a unique prefix (default: the last run)")] = None,
    stderr: Annotated[bool, typer.Option("--stderr", help="the run's stderr instead")] = False,
    config: ConfigOpt = None,
) -> None:
    """A run's output, as the command wrote it (default: the last run's stdout)."""
    from schedgen.commands import history as show

    path = show.log_file(config_path(config), job, run_id, stderr)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SchedgenError(f"{path}: {exc.strerror}") from None
    if not data:  # said on stderr: stdout stays the run's own bytes
        stream = "stderr" if stderr else "stdout"
        hint = "" if stderr else "; its stderr: --stderr"
        typer.echo(f"run {path.parent.name} of {job} wrote nothing to {stream} ({path}){hint}",
                   err=True)
        return
    sys.stdout.flush()
    sys.stdout.buffer.write(data)


@app.command("check")
def check_cmd(
    notify: Annotated[bool, typer.Option(
        "--notify", help="send each new problem once through the job's notify command, "
                    "mail and webhook")] = False,
    config: ConfigOpt = None, target: TargetOpt = None, as_json: JsonOpt = False,
) -> None:
    """Health for monitoring: exit 0 healthy, 1 with one line per problem (drift, failed
    last run, missed firings, failed/ items, stale inbox, lock held past the timeout),
    4 when no problem was seen but a scheduler could not be read (its state is unknown)."""
    from schedgen.commands import alerts, check

    health = check.check(config_path(config), _targets(target))
    sent = alerts.notify(health) if notify else None
    if as_json:
        typer.echo(json.dumps(check.as_json(health, sent), indent=2))
    else:
        typer.echo(check.as_text(health))
        for s in sent or ():
            via = "" if s.get("channel", "command") == "command" else f" by {s['channel']}"
            typer.echo(f"schedgen check: notify {s['job']} ({s['event']}){via}: {s['detail']}",
                       err=True)
    raise typer.Exit(health.exit_code)


@app.command("report")
def report_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", metavar="FILE.html",
                                      help="the page to write (beside the logs, failures "
                                      "link to their log files)")],
    days: Annotated[int | None, typer.Option(
        "--days", min=1, help="the last N days (default: fitted to the records)")] = None,
    since: Annotated[str | None, typer.Option(
        "--since", metavar="WHEN", help="start: a time ago (2d, 12h) or a local date/time "
        "(2026-01-05, 2026-01-05T10:00)")] = None,
    until: Annotated[str | None, typer.Option(
        "--until", metavar="WHEN", help="end (default: now), as --since")] = None,
    config: ConfigOpt = None,
) -> None:
    """One self-contained HTML page that answers "what failed and why": a lane per job of
    runs by outcome (failures drawn on top, counted where they coincide), missed firings
    and durations over time; last and next run; every failure with its exit and the tail
    of its log. The window fits the records unless --days/--since/--until say otherwise.
    Exit 4 (the page still written) when a scheduler could not be read: the page says so."""
    from schedgen.commands import report as htmlreport
    from schedgen.commands.report_when import utc_now, when

    now = utc_now()
    written = htmlreport.report(config_path(config), out, days, now,
                                when(since, now, "--since"), when(until, now, "--until"))
    n = written.runs
    typer.echo(f"wrote {out} ({n} run{'s' if n != 1 else ''} {written.words})")
    for _, w in written.unknown:
        typer.echo(f"unknown: {w}")
    raise typer.Exit(EXIT_UNKNOWN if written.unknown else EXIT_OK)


# One example per command, shown at the end of its --help.
EXAMPLES = {
    "validate": "schedgen validate -c ~/jobs.toml",
    "render": "schedgen render --out out/ --target cron",
    "diff": "schedgen diff   (--stat: file names only; --full: each new file's text)",
    "apply": "schedgen apply --dry-run   (then: schedgen apply)",
    "status": "schedgen status --check   (from any folder: the last apply's config is found)",
    "reconcile": "schedgen reconcile --json",
    "uninstall": "schedgen uninstall --namespace old --dry-run",
    "import": "schedgen import --from cron -o jobs.toml",
    "next": "schedgen next backup -n 3",
    "schema": "schedgen schema > jobs.schema.json",
    "run": "schedgen run backup --smoke",
    "pause": "schedgen pause backup --until 2026-12-24T08:00",
    "resume": "schedgen resume backup",
    "history": "schedgen history backup --since 2d",
    "logs": "schedgen logs backup --stderr",
    "check": "schedgen check --notify   (from cron, every 15 minutes)",
    "report": "schedgen report -o ~/.local/state/schedgen/logs/report.html --since 30d",
    "metrics": "schedgen metrics --out /var/lib/prometheus/node-exporter   (from a timer)",
    "doctor": "schedgen doctor backup",
}
for _c in app.registered_commands:
    _name = _c.name or (_c.callback.__name__ if _c.callback else "")
    _c.epilog = f"Example: {EXAMPLES[_name]}"


def _app_for(argv: list[str]) -> typer.Typer:
    """The app with only the command argv names, when it names one.

    typer turns every registered command's signature into click options before it
    dispatches (about a tenth of a `diff`); building only the one that runs gives the
    same parsing, help and errors for it. Anything else (no command, `--help`, an
    unknown name, completion) gets the whole app."""
    if not argv or argv[0].startswith("-"):
        return app
    wanted = [c for c in app.registered_commands
              if (c.name or (c.callback.__name__.lower().replace("_", "-")
                             if c.callback else None)) == argv[0]]
    if len(wanted) != 1:
        return app
    one = copy.copy(app)
    one.registered_commands = wanted
    return one


def main() -> None:
    sys.exit(error_handler.run(_app_for(sys.argv[1:]),
                               lambda line: typer.echo(line, err=True)))
