# One run, start to end.

# sg_main [--cron]: one run of the job. cron calls it with --cron (its output goes to
# cron.log), launchd with no argument, `schedgen run JOB` in the foreground.
sg_main() {
  if [ "${sg_api:-}" != "$sg_runtime_api" ]; then
    # shellcheck disable=SC2016  # the backticks are text: the command to run, quoted
    printf 'schedgen: %s: the runtime beside this job file is of another schedgen; run `schedgen apply`\n' "$sg_job" >&2
    exit 78
  fi
  sg_init
  # cron runs us with --cron: append our own output to the job's log, so the crontab
  # line stays a bare call and a deleted log directory never breaks it.
  if [ "${1-}" = --cron ]; then
    [ -d "$sg_log_dir" ] || mkdir -p "$sg_log_dir" 2>/dev/null
    exec >>"$sg_log_dir/cron.log" 2>&1
  fi
  # Start time and run ID (UTC); the ID is final once the run takes it (sg_new_id).
  sg_now
  sg_run_id=$sg_stamp-$$
  sg_start_epoch=$sg_epoch

  # Smoke runs write nothing until their checks pass; other runs make the log dir now.
  if [ "$sg_smoke" = 1 ]; then
    sg_record=0
  elif [ ! -d "$sg_log_dir" ] && ! mkdir -p "$sg_log_dir" 2>/dev/null; then
    sg_fail log_dir "cannot create the log directory $sg_log_dir"
  fi
  # A zoned job started too late for its firing: said in the events, not run.
  [ -z "${sg_tz_drop-}" ] || sg_tz_dropped
  # Paused (schedgen pause), or a start delay (random_delay): read past the cut.
  [ -z "${sg_paused-}${sg_policy-}" ] || sg_policy_start

  # Settings and secrets from the env file, read at run time (never copied into the job
  # file). Its own errors are not shown: they can quote its contents.
  if [ -n "$sg_env_file" ]; then
    [ -r "$sg_env_file" ] || sg_fail env_file "env file $sg_env_file is missing or unreadable"
    set +u
    set -a
    # shellcheck disable=SC1090  # the job's own file, known at run time only
    if ! . "$sg_env_file" 2>/dev/null; then
      set +a
      set -u
      sg_fail env_file "env file $sg_env_file failed to load (check it with: bash -n $sg_env_file)"
    fi
    set +a
    set -u
  fi
  sg_env                  # the job's environment from jobs.toml (after the file: it wins)
  if [ -n "$sg_working_dir" ]; then
    cd "$sg_working_dir" 2>/dev/null || sg_fail working_dir "working directory $sg_working_dir is missing"
  fi

  # The program must be on PATH (cron and launchd give a minimal one; this one is from jobs.toml).
  if [ -n "$sg_prog" ]; then
    command -v "$sg_prog" >/dev/null 2>&1 || sg_fail command "command not found: $sg_prog (PATH=$PATH)"
  fi
  if [ -n "$sg_smoke_prog" ] && [ "$sg_smoke" = 1 ]; then
    command -v "$sg_smoke_prog" >/dev/null 2>&1 || sg_fail command "smoke command not found: $sg_smoke_prog"
  fi
  sg_builtins             # PATH and the working directory as the command will have them

  # Smoke run: check the preconditions before touching anything (sg_smoke_checks).
  [ "$sg_smoke" != 1 ] || sg_smoke_checks

  if [ -n "$sg_lock_name" ]; then
    sg_lock_dir_ok
    sg_take_lock
  fi

  trap sg_on_exit EXIT
  trap 'sg_on_signal INT 2' INT
  trap 'sg_on_signal TERM 15' TERM
  trap 'sg_on_signal HUP 1' HUP
  sg_tidy=1
  sg_id_floor_set

  # Queue: claim files from the inbox by rename(2), so exactly one run gets each.
  [ -z "$sg_inbox" ] || [ "$sg_smoke" = 1 ] || sg_queue_main

  sg_crit=1
  sg_run 1
  exit "$sg_status"
}

# A paused job: its pause file exists (schedgen pause; the one stat a plain run adds).
sg_paused=''
[ ! -e "${sg_pause_file-}" ] || sg_paused=1
