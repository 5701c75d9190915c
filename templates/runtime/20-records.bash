
# events.jsonl: one JSON object per line, appended with one write (O_APPEND), e.g.
#   {"ts":"2025-01-31T06:15:00Z","event":"finish","job":"x","run_id":"20250131T061500Z-4242",
#    "pid":4242,"host":"mac","exit_code":0,"outcome":"ok","duration":3,"item":"a.json","attempt":1}
# Every line has ts (UTC), event, job, run_id, pid, host; then, by event:
#   start        item, attempt, smoke          the command is starting (run dir made)
#   finish       exit_code, outcome (ok|failed|timeout|interrupted), duration, item, attempt,
#                item_to (processed|inbox|failed|gone|processing)
#   busy         lock                          the lock was held by another run: exit busy_exit
#   empty                                      nothing left to claim in the inbox: exit 0
#   claim        item, attempt                 a claimed item's run begins (its run dir is made)
#   recover      item, claim, attempt, item_to, state
#                                              a dead worker's item was moved on: state done
#                                              (to processed), started (a failed attempt),
#                                              claimed (back to the inbox, not counted) or
#                                              foreign (a file its command left beside it:
#                                              to failed)
#   timeout      after                         the command ran past the timeout: killed, exit 124
#   signal       signal                        the wrapper got INT/TERM/HUP and passed it on
#   precondition what, message, exit_code      env file/working dir/command/log dir/lock: exit 78
#   error        message                       the wrapper could not do its own work
# A done queue item's finish line is written once it is in processed/ (sg_flush), so a
# finish line never names a move that did not happen.
# sg_event NAME [FIELDS]: FIELDS is JSON text starting with a comma.
sg_event() {
  [ "$sg_record" = 1 ] || return 0
  printf '{"ts":"%s","event":"%s","job":%s,"run_id":"%s","pid":%s,"host":%s%s}\n' \
    "$sg_iso" "$1" "$sg_job_j" "$sg_run_id" "$$" "$sg_host_j" "${2-}" 2>/dev/null >>"$sg_events" ||
    sg_lost
}

# sg_lost: a record (event, manifest) could not be written, or not whole (a full disk):
# the run says so once on stderr and exits 74 when its command did well (sg_on_exit), so
# that a run without its records is not taken for a good one.
sg_lost() {
  sg_fault=1
  [ "$sg_rlost" = 0 ] || return 0
  sg_rlost=1
  printf 'schedgen: %s: could not write the run records in %s (disk full?)\n' "$sg_job" "$sg_log_dir" >&2
}

# sg_fail WHAT MESSAGE: a precondition failed: say so, record it, exit 78.
sg_fail() {
  printf 'schedgen: %s: %s\n' "$sg_job" "$2" >&2
  sg_rlost=1           # its own event may not get written either (no log folder): said
  sg_js "$2"
  sg_event precondition ",\"what\":\"$1\",\"message\":$sg_j,\"exit_code\":78"
  [ "${sg_nfy:-0}" != 1 ] || sg_notify_finish 78 precondition "$sg_log_dir"
  exit 78
}
