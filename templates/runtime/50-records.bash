# Exit and records: events, manifests, the run's end.

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
#   late         firing, late, zone, max_lateness, outcome (dropped)
#                                              a zoned job's start came too late for
#                                              its firing: not run, exit 0
# A zoned job's start line and manifest also hold firing (zone-local) and late (seconds).
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

# sg_mlost: a manifest write failed. A finished run's folder that is gone was pruned by
# another run of the job (sg_alive takes a finished manifest for a run that is over, and a
# queue item's manifest is written once more after its move): keep_runs, not a fault.
sg_mlost() {
  if [ "$sg_outcome" != running ] && [ ! -d "$sg_run_dir" ]; then
    return 0
  fi
  sg_lost
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

# sg_manifest: (re)write the run's schedgen-manifest.json (one line, one write; named so
# that a command's own manifest.json in {artifact_dir}, the run directory, is left be).
# A rewrite goes
# over the old text in place (<>, no truncation: a truncated file gives its block back
# and takes a new one, several times the cost of the write on ext4 and APFS), padded
# with spaces (JSON whitespace) to the old length, when that is sure to cover it: the
# file still holds exactly what we wrote, and both texts are plain ASCII (so characters
# are bytes in any locale). Otherwise (a name with other characters, a command that
# wrote a file of that name there) it is written afresh. Only the job, host, item and
# path can bring other characters in (the rest is ours: digits, times, words).
sg_manifest() {
  local item=null path=null attempt=null fin=null dur=null code=null line cur='' n
  local plain=$sg_plain
  if [ -n "$sg_item_name" ]; then
    sg_js "$sg_item_name"; item=$sg_j
    sg_js "$sg_item_path"; path=$sg_j
    attempt=${sg_attempt:-null}
    case $item$path in *[!abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789' {}":,./_~+=@-']*) plain=0 ;; esac
  fi
  if [ "$sg_outcome" != running ]; then
    fin="\"$sg_iso\""
    dur=$((sg_epoch - sg_start_epoch))
    code=${sg_status:-null}
  fi
  printf -v line '{"format": 1, "job": %s, "run_id": "%s", "host": %s, "pid": %s, "started_at": "%s", "finished_at": %s, "duration": %s, "exit_code": %s, "outcome": "%s", "item": %s, "attempt": %s, "item_path": %s, "smoke": %s%s}' \
    "$sg_job_j" "$sg_run_id" "$sg_host_j" "$$" "$sg_started_at" "$fin" "$dur" "$code" \
    "$sg_outcome" "$item" "$attempt" "$path" "$sg_smoke_j" "${sg_tz_j-}"
  [ "$plain" = 1 ] || sg_mtext=''
  # The command may have put something else there (its directory is its own): a FIFO
  # would hang the run with its lock held, a symlink would be written through.
  if [ -L "$sg_run_dir/schedgen-manifest.json" ] ||
    { [ -e "$sg_run_dir/schedgen-manifest.json" ] && [ ! -f "$sg_run_dir/schedgen-manifest.json" ]; }; then
    rm -rf "$sg_run_dir/schedgen-manifest.json" 2>/dev/null
    sg_mtext=''
  fi
  if [ -n "$sg_mtext" ]; then
    # At most one character more than ours: a command's huge file is not read in.
    # Only the end of the file ends the read as ours does: one that stops early met a NUL
    # (our text, then a NUL and more: written over, the rest would stay behind).
    if IFS= read -r -n $((${#sg_mtext} + 2)) -d '' cur 2>/dev/null <"$sg_run_dir/schedgen-manifest.json"; then
      cur=''
    fi
    [ "$cur" = "$sg_mtext$sg_nl" ] || sg_mtext=''
  fi
  # One line: bash writes its output a line at a time, so this is one write(2).
  if [ -n "$sg_mtext" ]; then
    n=$((${#sg_mtext} - ${#line}))
    while [ "$n" -gt 0 ]; do
      line=$line${sg_pad:0:$n}
      n=$((${#sg_mtext} - ${#line}))
    done
    printf '%s\n' "$line" 2>/dev/null 1<>"$sg_run_dir/schedgen-manifest.json" || sg_mlost
  else
    printf '%s\n' "$line" 2>/dev/null >"$sg_run_dir/schedgen-manifest.json" || sg_mlost
  fi
  sg_mtext=$line
  [ "$plain" = 1 ] || sg_mtext=''
}

# sg_finish: the run's end: the item moves on, the manifest and the finish event. A done
# queue item's manifest says where it is now (its claim directory) and is written again
# once it has moved; its finish event waits for the move (sg_flush).
sg_finish() {
  local fields=''
  [ -n "$sg_status" ] || sg_status=70
  if [ "$sg_outcome" = running ]; then
    if [ -n "$sg_signal" ] && [ "$sg_status" -ne 0 ]; then sg_outcome=interrupted
    elif [ "$sg_status" -eq 0 ]; then sg_outcome=ok
    else sg_outcome=failed; fi
  fi
  sg_now
  sg_metrics_count
  if [ -z "$sg_inbox" ] || sg_item_end "$sg_status"; then
    sg_manifest
    if [ -n "$sg_item_name" ]; then
      sg_js "$sg_item_name"
      fields=",\"item\":$sg_j,\"attempt\":$sg_attempt,\"item_to\":\"$sg_item_to\""
    fi
    sg_event finish ",\"exit_code\":$sg_status,\"outcome\":\"$sg_outcome\",\"duration\":$((sg_epoch - sg_start_epoch))$fields"
    if [ -z "$sg_inbox" ]; then
      sg_hook finish
    elif [ "$sg_nfy" = 1 ] && [ -n "$sg_item_name" ] && [ "$sg_outcome" != ok ]; then
      # The queue job's one alert (sg_on_exit) tells of the last item that failed.
      sg_nfy_item=$sg_item_name sg_nfy_att=$sg_attempt sg_nfy_to=$sg_item_to
      sg_nfy_path=$sg_item_path sg_nfy_rid=$sg_run_id sg_nfy_rdir=$sg_run_dir
      sg_nfy_dur=$((sg_epoch - sg_start_epoch)) sg_nfy_code=$sg_status sg_nfy_out=$sg_outcome
    fi
  else
    sg_manifest
    sg_d_mtext[sg_nd - 1]=$sg_mtext   # for sg_flush's rewrite
  fi
  [ "$sg_fg" != 1 ] || sg_show
  sg_run_dir=''
}

# sg_hook start|finish: notify.sh's calls. A plain run has one start and one finish; a
# queue job sends one pair per wrapper call (its first item's start; the finish from
# sg_on_exit with the wrapper's exit status), so a batch is not a ping per item.
sg_hook() {
  [ "$sg_nfy" = 1 ] || return 0
  case $1 in
    start)
      sg_nfy_dir=$sg_run_dir
      [ "$sg_nfy_started" = 0 ] || return 0
      sg_nfy_started=1
      sg_notify_start "$sg_run_dir" ;;
    finish)
      sg_nfy_started=2
      sg_notify_finish "$sg_status" "$sg_outcome" "$sg_log_dir" "$sg_nfy_dir" ;;
  esac
}

# On exit, whatever the path: the item and the run are settled, the claim released,
# logs rotated and old runs pruned.
sg_on_exit() {
  local st=$?
  [ "$BASH_SUBSHELL" = "$sg_shell" ] || return "$st"   # see sg_on_signal
  [ "$sg_lb" != 1 ] || enable -n mkdir   # the notify command is the job's own code
  trap '' INT TERM HUP
  sg_crit=2
  [ -z "$sg_wd_pid" ] || sg_wd_stop
  sg_reap TERM
  if [ -n "$sg_run_dir" ]; then
    [ -n "$sg_status" ] || sg_status=$st
    [ -n "$sg_signal" ] || [ "$sg_status" -eq 0 ] || sg_outcome=failed
    sg_finish
  fi
  if [ -n "$sg_inbox" ]; then
    sg_item_end "${sg_status:-$st}" || :
    sg_flush
    sg_release
    sg_close_claim
  fi
  # An item that could not be moved on (e.g. processed/ unwritable) is the wrapper's
  # failure, not the command's: say so in the exit status (EX_IOERR).
  if [ "$sg_fault" != 0 ] && [ "$st" -eq 0 ]; then
    st=74
    sg_outcome=failed
  fi
  if [ "$sg_nfy_started" = 1 ]; then   # a queue job's one finish (after its moves)
    sg_status=$st
    if [ "$st" -eq 0 ]; then sg_outcome=ok
    elif [ -n "$sg_signal" ]; then sg_outcome=interrupted
    elif [ "$sg_outcome" = ok ]; then sg_outcome=failed; fi
    sg_hook finish
  fi
  if [ "$sg_tidy" = 1 ]; then
    sg_rotate
    sg_prune
    sg_last_run_note
  fi
  [ -z "$sg_metrics_file" ] || sg_metrics_end
  [ "$st" != 74 ] || [ "$sg_fault" = 0 ] || exit 74
}
