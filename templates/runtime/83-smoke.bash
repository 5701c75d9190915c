# Smoke runs and the foreground (`schedgen run`).

# sg_smoke_checks: a smoke run's checks, before anything is written; with no smoke
# command they are the smoke test (exit 0), else the smoke command runs next.
sg_smoke_checks() {
  export SCHEDGEN_SMOKE=1
  if [ -n "$sg_bash_command" ]; then
    bash -n -c "$sg_bash_command" || sg_fail command "the command is not valid bash"
  fi
  sg_writable "$sg_log_dir" || sg_fail log_dir "log directory $sg_log_dir is not writable"
  if [ -n "$sg_lock_name" ]; then
    sg_writable "$sg_lock_dir" || sg_fail lock "lock directory $sg_lock_dir is not writable"
    if [ -e "$sg_lock_dir/$sg_lock_name.lock" ]; then
      # Read-only, and only a plain file of ours (as sg_take_lock): a smoke run makes nothing.
      if [ ! -f "$sg_lock_dir/$sg_lock_name.lock" ] || [ ! -O "$sg_lock_dir/$sg_lock_name.lock" ]; then
        sg_fail lock "the lock file $sg_lock_dir/$sg_lock_name.lock is not a plain file of this user; refusing it"
      fi
      { exec 9<"$sg_lock_dir/$sg_lock_name.lock"; } 2>/dev/null || sg_fail lock "cannot open the lock file"
      sg_lock 9 0 || { printf 'schedgen: %s: lock %s is busy (a run is going on)\n' "$sg_job" "$sg_lock_name" >&2; exit "$sg_busy_exit"; }
      exec 9>&-
    fi
  fi
  if [ -n "$sg_inbox" ] && [ ! -d "$sg_inbox" ]; then
    printf 'schedgen: %s: note: inbox %s does not exist yet\n' "$sg_job" "$sg_inbox" >&2
  fi
  if [ "$sg_has_smoke" != 1 ]; then
    printf 'smoke ok\n'      # no smoke command: the checks were the smoke test
    exit 0
  fi
  # Then run the smoke command (with a queue, no item is claimed: {item} is empty).
  [ -d "$sg_log_dir" ] || mkdir -p "$sg_log_dir" 2>/dev/null || sg_fail log_dir "cannot create $sg_log_dir"
  sg_record=1
}

# sg_writable DIR: DIR is writable, or could be made (its nearest existing parent is).
sg_writable() {
  local d=$1
  while [ ! -e "$d" ]; do d=${d%/*}; [ -n "$d" ] || d=/; done
  [ -d "$d" ] && [ -w "$d" ]
}

# sg_show: in the foreground (`schedgen run`), the run's result and the end of its output.
sg_show() {
  [ "$sg_fg" = 1 ] || return 0
  printf 'schedgen: %s run %s: %s (exit %s, %ss)%s\n  %s\n' "$sg_job" "$sg_run_id" "$sg_outcome" \
    "${sg_status:-?}" "$((sg_epoch - sg_start_epoch))" "${sg_item_name:+, item $sg_item_name}" \
    "$sg_run_dir" >&2
  if [ -s "$sg_run_dir/stdout.log" ]; then
    printf -- '--- stdout (last 40 lines) ---\n'
    tail -n 40 "$sg_run_dir/stdout.log"
  fi
  if [ -s "$sg_run_dir/stderr.log" ]; then
    printf -- '--- stderr (last 40 lines) ---\n' >&2
    tail -n 40 "$sg_run_dir/stderr.log" >&2
  fi
}
