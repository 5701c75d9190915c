# Retries (read past the cut: only jobs with retries). A failed or timed-out run is run
# again within the same wrapper call and the same lock, up to sg_retries more times, each
# attempt a run of its own (run ID, directory, manifest, start and finish events, with
# "attempt" and "attempts"). The delays (sg_retry_delays, one per retry, in seconds) are
# worked out by schedgen; no retry starts sg_retry_window seconds or more after the first
# attempt began (the next firing may be due by then; 0: no limit). Notify and the ping's
# end go out once, after the last attempt.

# sg_retry_runs: the attempts (sg_main, in place of one sg_run).
sg_retry_runs() {
  # The window counts from the firing: a start the gate found late (a catch-up) has
  # less of it left. (The start delay is before sg_start_epoch already.)
  sg_try=1 sg_try_more=0 sg_try_wait=0 sg_try_first=$((sg_start_epoch - ${sg_tz_lsec:-0})) sg_sl_pid=''
  while :; do
    sg_try_j=",\"attempt\":$sg_try,\"attempts\":$((sg_retries + 1))"
    sg_try_m=", \"attempts\": $((sg_retries + 1))"
    sg_crit=1
    sg_run 1
    [ "$sg_try_more" = 1 ] || return 0
    sg_retry_sleep "$sg_try_wait"
    sg_try_more=0 sg_try=$((sg_try + 1))
  done
}

# sg_retry_due: called as an attempt's finish is written (sg_finish); true when another
# attempt follows (its delay in sg_try_wait, said by a retry event), so that the finish
# is not notified yet. Not after a success, a signal or the last attempt, nor in a smoke
# run; not when the retry would start past the window (a no_retry event says so).
sg_retry_due() {
  local w
  sg_try_more=0
  [ "$sg_smoke" != 1 ] && [ -z "$sg_signal" ] && [ "${sg_try:-0}" -ge 1 ] &&
    [ "$sg_try" -le "$sg_retries" ] || return 1
  case $sg_outcome in failed|timeout) ;; *) return 1 ;; esac
  # shellcheck disable=SC2086  # split on purpose: one delay per word
  set -- ${sg_retry_delays-}
  eval "w=\${$sg_try:-0}"
  if [ "${sg_retry_window:-0}" -gt 0 ] && [ $((sg_epoch + w - sg_try_first)) -ge "$sg_retry_window" ]; then
    sg_event no_retry "$sg_try_j,\"reason\":\"next_firing\",\"delay\":$w,\"window\":$sg_retry_window"
    return 1
  fi
  sg_event retry ",\"attempt\":$((sg_try + 1)),\"attempts\":$((sg_retries + 1)),\"delay\":$w"
  sg_try_wait=$w sg_try_more=1
}

# sg_retry_sleep SECONDS: the delay, in the background so that a signal ends it at once
# (bash acts on a trap only once a foreground command ends; a wait it interrupts). The
# sleep holds none of the run's descriptors: a killed wrapper's lock is not kept by it.
sg_retry_sleep() {
  [ "$1" -gt 0 ] || return 0
  # A signal acted on between the fork and the next line finds sg_sl_pid empty: the
  # sleep is then $!, told from an earlier background pid by sg_sl_prev.
  sg_sl_prev=${!-} sg_sl_armed=1
  sleep "$1" >/dev/null 2>&1 6>&- 7>&- 8>&- 9>&- &
  sg_sl_pid=$!
  wait "$sg_sl_pid" 2>/dev/null
  sg_sl_pid='' sg_sl_armed=''
}

# shellcheck disable=SC2317  # called by sg_on_exit; shellcheck misses that when inlined
# sg_retry_exit: the wrapper ends between attempts (a signal during the delay): the
# sleep goes, and the failure held back for the retry is notified now.
sg_retry_exit() {
  # Unset when the wrapper ends before its first attempt (a signal as it starts).
  local p=${sg_sl_pid-}
  if [ -z "$p" ] && [ "${sg_sl_armed-}" = 1 ] && [ "${!-}" != "${sg_sl_prev-}" ]; then
    p=$!
  fi
  # KILL, and reaped: gone before the wrapper is (a TERM ignored since the wrapper's
  # start would be ignored by the sleep too).
  if [ -n "$p" ]; then kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null; fi
  sg_sl_pid='' sg_sl_armed=''
  [ "${sg_try_more-}" = 1 ] || return 0
  sg_try_more=0
  sg_hook finish
}
