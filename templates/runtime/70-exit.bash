
# --- exit and signals ------------------------------------------------------------

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
  [ "$st" != 74 ] || [ "$sg_fault" = 0 ] || exit 74
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
