# Metrics: the job's Prometheus text file (metrics_dir), for node_exporter's textfile
# collector. Counters survive rotation: they live in the job's state file
# (<log dir>/.metrics, one fixed-width line written over in place), not in run dirs.
# Who writes it: a job with a lock, only runs that hold it (so no second lock on the hot
# path); a job without one, under flock on the state file itself. Busy runs never hold
# the lock: they count in .metrics-busy under its own flock, read by the next holder.

# sg_metrics_count: one run's end (sg_finish), kept until the wrapper ends.
sg_metrics_count() {
  [ -n "$sg_metrics_file" ] && [ "$sg_record" = 1 ] || return 0
  case $sg_outcome in
    ok) sg_m_ok=$((sg_m_ok + 1)) sg_m_lok=$sg_epoch ;;
    timeout) sg_m_to=$((sg_m_to + 1)) sg_m_lfail=$sg_epoch ;;
    interrupted) sg_m_int=$((sg_m_int + 1)) sg_m_lfail=$sg_epoch ;;
    *) sg_m_fail=$((sg_m_fail + 1)) sg_m_lfail=$sg_epoch ;;
  esac
  sg_m_n=$((sg_m_n + 1))
  sg_m_start=$sg_start_epoch sg_m_dur=$((sg_epoch - sg_start_epoch)) sg_m_code=${sg_status:-0}
}

# sg_metrics_file_ok FILE: a plain file or none (a FIFO would hang us, a symlink be written through).
sg_metrics_file_ok() {
  [ ! -L "$1" ] && { [ ! -e "$1" ] || [ -f "$1" ]; }
}

# sg_metrics_busy: a busy run adds one to .metrics-busy, under flock (fd 6).
sg_metrics_busy() {
  local f=$sg_log_dir/.metrics-busy n=''
  [ -n "$sg_metrics_file" ] && [ "$sg_record" = 1 ] && sg_metrics_file_ok "$f" || return 0
  { exec 6<>"$f"; } 2>/dev/null || return 0
  if sg_lock 6 10; then
    IFS=' ' read -r -n 32 n _ 2>/dev/null <"$f"
    case $n in ''|*[!0-9]*|???????????????????*) n=0 ;; esac
    printf '%-31s\n' $((n + 1)) 2>/dev/null 1<>"$f"
  fi
  exec 6>&-
}

# sg_metrics_end: the wrapper's end: the runs of this call added to the state, the text
# file written whole (a temp file in its folder, then one mv).
sg_metrics_end() {
  local st=$sg_log_dir/.metrics v='' ok=0 fl=0 to=0 it=0 ls=0 lo=0 lf=0 ld=0 lc=0 busy=0 x t
  [ "$sg_m_n" -gt 0 ] && sg_metrics_file_ok "$st" || return 0
  if [ -z "$sg_lock_name" ]; then
    if ! { exec 6<>"$st"; } 2>/dev/null || ! sg_lock 6 30; then
      exec 6>&-
      sg_metrics_lost
      return 0
    fi
  fi
  [ ! -f "$st" ] || IFS=' ' read -r -n 200 v ok fl to it ls lo lf ld lc x 2>/dev/null <"$st"
  [ "$v" = 1 ] || { ok=0 fl=0 to=0 it=0 ls=0 lo=0 lf=0 ld=0 lc=0; }
  # Not a count of ours: 0 (19 digits or more would overflow bash's arithmetic). One case
  # for the usual line (nine fields of 1 to 18 digits, no leading 0); field by field else.
  case " $ok $fl $to $it $ls $lo $lf $ld $lc " in
    *' 0'[0-9]*|*'  '*|*[!0-9' ']*|*[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]*)
      for x in ok fl to it ls lo lf ld lc; do
        eval "t=\$$x"
        case $t in ''|0?*|*[!0-9]*|???????????????????*) eval "$x=0" ;; esac
      done ;;
  esac
  ok=$((ok + sg_m_ok)) fl=$((fl + sg_m_fail)) to=$((to + sg_m_to)) it=$((it + sg_m_int))
  ls=$sg_m_start ld=$sg_m_dur lc=$sg_m_code
  [ "$sg_m_lok" = 0 ] || lo=$sg_m_lok
  [ "$sg_m_lfail" = 0 ] || lf=$sg_m_lfail
  printf '%-127s\n' "1 $ok $fl $to $it $ls $lo $lf $ld $lc" 2>/dev/null 1<>"$st" || sg_metrics_lost
  if sg_metrics_file_ok "$sg_log_dir/.metrics-busy" && [ -f "$sg_log_dir/.metrics-busy" ]; then
    IFS=' ' read -r -n 32 busy x 2>/dev/null <"$sg_log_dir/.metrics-busy"
    case $busy in ''|0?*|*[!0-9]*|???????????????????*) busy=0 ;; esac
  fi
  # Its job gone while it ran: apply removed its file for good (plan/metrics_exports.py).
  if [ -z "$sg_self" ] || [ -e "$sg_self" ]; then
    sg_metrics_write "$ok" "$fl" "$to" "$it" "$ls" "$lo" "$lf" "$ld" "$lc" "$busy"
  fi
  [ -n "$sg_lock_name" ] || exec 6>&-
}

# sg_metrics_write OK FAILED TIMEOUT INTERRUPTED START SUCCESS FAILURE DURATION CODE BUSY
# One printf straight into the temp file (no text built with printf -v first), then one
# mv: the only fork (bash has no rename builtin, nor has any of its loadables).
sg_metrics_write() {
  local l=$sg_metrics_labels p=schedgen_job_ d=${sg_metrics_file%/*} f tmp
  tmp=$d/.${sg_metrics_file##*/}.$$
  [ -z "$sg_inbox" ] || sg_metrics_queue
  f='# HELP %slast_start_timestamp_seconds When the last run started (Unix time).\n# TYPE %slast_start_timestamp_seconds gauge\n%slast_start_timestamp_seconds{%s} %s\n'
  f=$f'# HELP %slast_success_timestamp_seconds When the last ok run ended (Unix time; 0: never).\n# TYPE %slast_success_timestamp_seconds gauge\n%slast_success_timestamp_seconds{%s} %s\n'
  f=$f'# HELP %slast_failure_timestamp_seconds When the last failed, timed out or interrupted run ended (Unix time; 0: never).\n# TYPE %slast_failure_timestamp_seconds gauge\n%slast_failure_timestamp_seconds{%s} %s\n'
  f=$f'# HELP %slast_duration_seconds How long the last run took.\n# TYPE %slast_duration_seconds gauge\n%slast_duration_seconds{%s} %s\n'
  f=$f'# HELP %slast_exit_code The last run'"'"'s exit status.\n# TYPE %slast_exit_code gauge\n%slast_exit_code{%s} %s\n'
  f=$f'# HELP %sruns_total Runs ended, by outcome.\n# TYPE %sruns_total counter\n%sruns_total{%s,outcome="ok"} %s\n%sruns_total{%s,outcome="failed"} %s\n%sruns_total{%s,outcome="timeout"} %s\n%sruns_total{%s,outcome="interrupted"} %s\n'
  f=$f'# HELP %slock_busy_total Runs that found the job'"'"'s lock held and gave up.\n# TYPE %slock_busy_total counter\n%slock_busy_total{%s} %s\n%s'
  # Readable by the collector (node_exporter runs as a user of its own): 0644, not the
  # job's 0600 (umask is a builtin; chmod would be a fork).
  umask 022
  if [ -d "$d" ] || mkdir -p "$d" 2>/dev/null; then
    # shellcheck disable=SC2059  # the format is the fixed text above
    if printf "$f" "$p" "$p" "$p" "$l" "$5" "$p" "$p" "$p" "$l" "$6" "$p" "$p" "$p" "$l" "$7" \
      "$p" "$p" "$p" "$l" "$8" "$p" "$p" "$p" "$l" "$9" \
      "$p" "$p" "$p" "$l" "$1" "$p" "$l" "$2" "$p" "$l" "$3" "$p" "$l" "$4" \
      "$p" "$p" "$p" "$l" "${10}" "$sg_m_q" 2>/dev/null >"$tmp" &&
      LC_ALL=C mv -f "$tmp" "$sg_metrics_file" 2>/dev/null; then
      umask 077
      return 0
    fi
    rm -f "$tmp" 2>/dev/null
  fi
  umask 077
  sg_metrics_lost
}

# sg_metrics_lost: said once on stderr; the run's exit status stays its command's.
sg_metrics_lost() {
  printf 'schedgen: %s: could not write the metrics file %s\n' "$sg_job" "$sg_metrics_file" >&2
}
