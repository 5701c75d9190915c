# Timeouts (read past the cut: only jobs with a timeout).

# sg_watchdog: with a timeout, a process of its own that after sg_timeout seconds (or at
# once if the wrapper is gone) marks the run, sends TERM to the command's group and
# KILL 5 s later (sg_grace). It closes the lock descriptors first, so it never keeps a
# lock held. INT, TERM and HUP do not stop it (a `killall bash` would have ended the
# timeout unseen): the wrapper stops it with KILL (sg_wd_stop).
sg_watchdog() {
  local n=0
  trap '' INT TERM HUP
  exec 6>&- 7>&- 8>&- 9>&- </dev/null >/dev/null 2>&1
  while [ "$n" -lt "$sg_timeout" ] && kill -0 "$sg_wrapper_pid"; do sleep 1; n=$((n + 1)); done
  [ "$n" -lt "$sg_timeout" ] || : >"$sg_run_dir/.timeout"
  sg_tk=0
  sg_term_kill "-$sg_cmd_pid" "-$sg_cmd_pid" $((sg_grace + 1))
}

# sg_wd_stop: the command ended before its timeout: stop the watchdog. One that passed
# its time as the command ended may have marked the run meanwhile: the mark goes too.
sg_wd_stop() {
  kill -KILL -- "-$sg_wd_pid" 2>/dev/null
  wait "$sg_wd_pid" 2>/dev/null
  sg_wd_pid=''
  [ -z "$sg_run_dir" ] || [ ! -e "$sg_run_dir/.timeout" ] || rm -f "$sg_run_dir/.timeout"
}
