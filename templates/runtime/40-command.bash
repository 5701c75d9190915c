# The command and its signals.

# sg_run WANT: one run of the command: run directory, manifest, events, stdout/stderr
# files. WANT: how many runs are still to come, this one included (see sg_run_dir_new).
sg_run() {
  local fields=''
  sg_crit=1
  sg_now
  sg_started_at=$sg_iso sg_start_epoch=$sg_epoch
  sg_outcome=running sg_status='' sg_item_to='' sg_item_path=$sg_item
  if [ -n "$sg_inbox" ]; then sg_run_dir_new "$1"; else sg_run_dir_one; fi
  SCHEDGEN_RUN_ID=$sg_run_id
  SCHEDGEN_ARTIFACT_DIR=$sg_run_dir
  SCHEDGEN_ITEM=$sg_item
  export SCHEDGEN_RUN_ID SCHEDGEN_ARTIFACT_DIR SCHEDGEN_ITEM
  sg_mtext=''
  sg_manifest
  if [ -n "$sg_item_name" ]; then
    sg_js "$sg_item_name"
    fields=",\"item\":$sg_j,\"attempt\":$sg_attempt"
    sg_event claim "$fields"
  fi
  sg_event start "$fields,\"smoke\":$sg_smoke_j${sg_tz_j-}${sg_delay_j-}"
  sg_hook start
  # A signal held since the critical section began stops the run before the command
  # starts: it never ran, so an item goes back without counting an attempt.
  [ -z "$sg_signal" ] || sg_crit_end
  [ -z "$sg_item_name" ] || sg_started=1   # its keeper journals the start
  # The command runs in the background, in a process group of its own, so that a signal
  # to this script can be passed on to all of it while we wait; stdin is /dev/null, its
  # output goes to the run directory. Inside the critical section a signal waits until
  # $! is noted, so there is no moment when a command runs that we do not know of.
  set -m
  sg_keeper &
  sg_cmd_pid=$!
  if [ "$sg_timeout" -gt 0 ]; then
    sg_watchdog &
    sg_wd_pid=$!
  fi
  set +m
  sg_crit_end
  sg_reap
  sg_crit=1
  if [ -n "$sg_wd_pid" ]; then
    # A queue item's command that ended fine before its time (its keeper journaled it
    # done, which it does not past the mark) did not time out, even if what it left
    # behind kept the run going until the watchdog's time came.
    if [ -e "$sg_run_dir/.timeout" ] && [ -n "$sg_item_name" ] && [ -n "$sg_journal" ]; then
      sg_journal_read "$sg_journal"
      case $sg_jdone in *"/$sg_item_name/"*) sg_wd_stop ;; esac
    fi
    if [ -n "$sg_wd_pid" ] && [ -e "$sg_run_dir/.timeout" ]; then
      wait "$sg_wd_pid"
      rm -f "$sg_run_dir/.timeout"
      sg_wd_pid=''
      sg_status=124
      sg_outcome=timeout
      printf 'schedgen: %s: timed out after %ss; killed\n' "$sg_job" "$sg_timeout" >&2
      sg_now
      sg_event timeout ",\"after\":$sg_timeout"
    elif [ -n "$sg_wd_pid" ]; then
      sg_wd_stop
    fi
  fi
  sg_finish
  sg_crit_end
}

# sg_keeper: the background process that runs the command (its process group's leader,
# set -m). For a queue item it waits for the command and journals how it ended, so that
# a command that finished is not run again if the wrapper alone is killed afterwards;
# it holds the run's lock descriptors as long as it lives. Signals do not stop it (a
# handler, not SIG_IGN, so the command keeps the default ones): it outlives its command.
sg_keeper() {
  local st
  trap - EXIT
  [ "$sg_lb" != 1 ] || enable -n mkdir   # off already (sg_mkdir runs in the critical section): defensive
  # Its output files made here, so that one a full disk refuses is the wrapper's fault
  # (74, said on the wrapper's stderr), not a failure of a command that never ran.
  exec </dev/null
  if ! exec >"$sg_run_dir/stdout.log" 2>"$sg_run_dir/stderr.log"; then
    printf 'schedgen: %s: cannot create stdout.log and stderr.log in %s; not run\n' \
      "$sg_job" "$sg_run_dir" >&2
    exit 74
  fi
  if [ -z "$sg_item_name" ]; then
    sg_exec='exec'
    sg_run_command
    exit
  fi
  set +m                 # the command stays in this group
  trap : INT TERM HUP
  # Journaled here, not before the fork: a run that dies before its keeper gets this far
  # never started the command, and recovery returns the item without counting an attempt.
  # No record, no run (a full disk): a command that ran unrecorded would run again.
  if ! sg_jot s "$sg_item_name"; then
    printf 'schedgen: %s: could not journal the start of %s in %s; not run\n' \
      "$sg_job" "$sg_item_name" "$sg_journal" >&2
    exit 74
  fi
  sg_exec=''
  sg_run_command
  st=$?
  # Past its timeout (the watchdog marks the run before its TERM), an exit 0 is the
  # command's answer to the TERM, not the end of its work: as for a plain job, 124.
  if [ "$sg_timeout" -gt 0 ] && [ -e "$sg_run_dir/.timeout" ]; then st=124; fi
  if [ "$st" -eq 0 ]; then sg_jot d "$sg_item_name"; else sg_jot f "$sg_item_name"; fi
  exit "$st"
}

# sg_run_command: the job's command, or in a smoke run its smoke command (job file).
sg_run_command() {
  if [ "$sg_smoke" = 1 ] && [ "$sg_has_smoke" = 1 ]; then
    sg_smoke_command
  else
    sg_command
  fi
}

# sg_reap [TERM]: wait for the command's keeper, then for every process left in its
# group; with TERM, stop the group first (sg_term_kill: KILL 5 s after TERM, keeper and
# all, so a command that ignores TERM does not keep the run going). Sets sg_status
# unless it is set. This is the only place that waits for the command: a signal
# meanwhile is noted by its trap (sg_crit), which interrupts the wait; it is passed on
# here and the wait goes on, so no wait is ever nested in a trap.
sg_reap() {
  local st st2 seen sent=${1-} crit=$sg_crit
  [ -n "$sg_cmd_pid" ] || return 0
  sg_tk=0
  sg_crit=1
  while :; do
    seen=$sg_nsig
    # Told to stop: polled, not waited for, so that KILL comes on time (bash reaps
    # an ended child as it ends, so kill -0 then fails).
    [ -z "$sent" ] || sg_term_kill "$sg_cmd_pid" "-$sg_cmd_pid"
    wait "$sg_cmd_pid" 2>/dev/null
    st=$?
    [ -z "$sg_signal" ] || sent=TERM                 # a signal came: stop it (above)
    [ "$seen" != "$sg_nsig" ] || break               # it ended: st is its status
    kill -0 "$sg_cmd_pid" 2>/dev/null && continue     # interrupted (or a zombie): again
    # It ended while a signal came: ask for its own status (bash 3.2 may no longer have
    # it if the wait above got it: 127).
    wait "$sg_cmd_pid" 2>/dev/null
    st2=$?
    [ "$st2" = 127 ] || st=$st2
    break
  done
  [ -n "$sg_status" ] || sg_status=$st
  # What the command left behind must not work on the item once it moves on: TERM now
  # (unless sent above), KILL once 5 s have passed since the first TERM.
  sg_term_kill "-$sg_cmd_pid" "-$sg_cmd_pid"
  sg_cmd_pid=''
  sg_crit=$crit
}

# sg_term_kill PID GROUP [LIMIT]: while PID lives (a pid, or -PGID: a whole group), TERM
# to GROUP at first (while sg_tk is 0), KILL from sg_grace tenths of a second on; with
# LIMIT, no longer than that many tenths. sg_tk counts the tenths, so that a second call
# goes on where the first stopped. The one TERM-then-KILL of the runtime: a signal to
# the wrapper, what a command left in its group, the timeout's watchdog.
sg_term_kill() {
  while kill -0 -- "$1" 2>/dev/null; do
    [ -z "${3-}" ] || [ "$sg_tk" -lt "$3" ] || return 0
    [ "$sg_tk" -ne 0 ] || kill -TERM -- "$2" 2>/dev/null
    [ "$sg_tk" -lt "$sg_grace" ] || kill -KILL -- "$2" 2>/dev/null
    sleep 0.1
    sg_tk=$((sg_tk + 1))
  done
}

# INT, TERM, HUP: noted; inside a critical section acted on at its end (sg_crit_end).
# Acting: pass TERM on to the command's whole process group, wait until all of it has
# ended, then exit 128+N; the EXIT trap settles the item and the run as for any failure.
sg_on_signal() {
  # A signal pending when the keeper is forked can run this trap in the child before
  # bash resets it there: only the wrapper itself acts on it.
  [ "$BASH_SUBSHELL" = "$sg_shell" ] || return 0
  sg_nsig=$((sg_nsig + 1))
  if [ -z "$sg_signal" ]; then
    sg_signal=$1 sg_signum=$2
  fi
  [ "$sg_crit" = 0 ] || return 0
  sg_stop
}

sg_stop() {
  trap '' INT TERM HUP
  sg_crit=2
  sg_now
  sg_event signal ",\"signal\":\"$sg_signal\""
  sg_reap TERM
  exit $((128 + sg_signum))
}

sg_crit_end() {
  sg_crit=0
  [ -z "$sg_signal" ] || sg_stop
}
