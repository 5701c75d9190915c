# shellcheck shell=bash
# schedgen-managed: the notify part of the wrapper runtime (plain bash, no templating).
# Heartbeat pings (healthchecks.io protocol) and the job's notify command, for one run.
# bash 3.2 + BSD tools. Settings, entry points and how it loads: see "Contract" below
# the load guard (placed there so that a run with nothing to send never parses it).

sg_notify_ping_pid=${sg_notify_ping_pid-}
sg_notify_sh=${BASH_SOURCE[0]-}
case $sg_notify_sh in /*) ;; *) sg_notify_sh=$PWD/$sg_notify_sh ;; esac   # before any cd

sg_notify_start() {
  [ -z "${sg_ping_url-}" ] || sg_notify_load start "$@"
  return 0
}

# A success with no ping and no failure before it (LOG_DIR/.notify-failed) has nothing
# to send: that is the common case, and it costs one stat.
sg_notify_finish() {
  [ "$2" != busy ] || return 0
  if [ -z "${sg_ping_url-}" ] && [ "$1" = 0 ]; then
    case " ${sg_notify_on-} " in
      *" recovery "*) [ -e "$3/.notify-failed" ] || return 0 ;;
      *) return 0 ;;
    esac
  fi
  sg_notify_load finish "$@"
  return 0
}

# sg_notify_load start|finish ARGS...: read the rest of this file (once), then do it.
sg_notify_load() {
  if [ "${sg_notify_full-}" != 1 ]; then
    sg_notify_full=1
    # shellcheck source=/dev/null
    . "$sg_notify_sh" || { sg_notify_full=''; return 1; }
  fi
  local what=$1
  shift
  "sg_notify_${what}_now" "$@"
}

# The rest is read only by sg_notify_load (or when sg_notify_full=1 from the start).
[ "${sg_notify_full-}" = 1 ] || return 0

# --- Contract -------------------------------------------------------------------
#
# Settings, set by the job file before the calls (all optional, all may be unset):
#   sg_notify_on       events the command is for, space-separated: "failure recovery"
#                      ("missed" is sent by `schedgen check --notify`, not by a run)
#   sg_notify_cmd      a FUNCTION, defined only when the job has a notify command;
#                      it runs with the run's SCHEDGEN_* values in its environment and
#                      the tail of the run's stderr on stdin
#   sg_notify_timeout  seconds the command may run before its process group is killed (30)
#   sg_ping_url        heartbeat URL: URL/start, URL on success, URL/<exit code> on failure
#   sg_ping_timeout    seconds one ping may take (5)
# Read from the environment (the runtime exports them): SCHEDGEN_JOB, SCHEDGEN_RUN_ID,
# SCHEDGEN_ARTIFACT_DIR, SCHEDGEN_ITEM.
#
# Entry points (both return 0 at once; the work runs in the background):
#   sg_notify_start RUN_DIR
#       when the command starts: pings URL/start.
#   sg_notify_finish STATUS OUTCOME LOG_DIR [RUN_DIR]
#       when a run has ended (ok, failed, timeout, interrupted, precondition, empty; a
#       busy run is ignored): pings, and runs the command for failure/recovery.
#       LOG_DIR holds the recovery state (.notify-failed); results go to
#       RUN_DIR/notify.log (LOG_DIR/notify.log when the run has no directory).
#
# Loading: the job file sets sg_notify_full=1 and sources this file, when the job has
# notify settings: all is read at once, so a run keeps the part it started with however
# long it takes (an apply may replace the file meanwhile), and sg_notify_read=1 at the end
# tells the job file that none of it was cut off. Without sg_notify_full only the entry
# points are read, and the rest (sg_notify_load) when something is due.
#
# Background work never holds the job's lock (descriptors 3-9 are closed in it), gets a
# process group of its own (so launchd does not kill it with the job's group), and never
# changes the caller's exit status. The ping URL is passed to curl on stdin (-K -), so it
# appears neither in `ps` nor in any log; -q (first, or curl ignores it) keeps the user's
# ~/.curlrc (a proxy, a trace file, its own -w) out of it.

# sg_notify_bg: the background context, entered as the first command of a `{ } &` group.
sg_notify_bg() {
  # The run's end ignores these (sg_on_exit, sg_stop), and an ignored signal stays ignored
  # across exec: the notify command's own timeout would have had to wait for its KILL.
  trap - INT TERM HUP
  exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
}

# sg_notify_ping SUFFIX DIR: URL/SUFFIX (plain URL when SUFFIX is empty), in the
# background; a ping waits for the one before it, so /start never arrives after the end.
sg_notify_ping() {
  local url=${sg_ping_url%%\?*} query='' what=${1:-success} m=0 prev=$sg_notify_ping_pid
  case $sg_ping_url in *\?*) query=\?${sg_ping_url#*\?} ;; esac
  url=${url%/}
  [ -z "$1" ] || url=$url/$1
  url=$url$query
  if ! command -v curl >/dev/null 2>&1; then
    printf 'ping %s: not sent: curl not found on PATH\n' "$what" >>"$2/notify.log" 2>/dev/null
    return 0
  fi
  case $- in *m*) m=1 ;; esac
  set -m
  {
    sg_notify_bg
    local n=0 code st
    while [ -n "$prev" ] && [ "$n" -lt 100 ] && kill -0 "$prev" 2>/dev/null; do
      sleep 0.1
      n=$((n + 1))
    done
    code=$(printf 'url = "%s"\n' "$url" |
      curl -q -sS -o /dev/null -w '%{http_code}' -m "${sg_ping_timeout:-5}" -K - 2>/dev/null)
    st=$?
    case $st:$code in
      0:2??) printf 'ping %s: sent (HTTP %s)\n' "$what" "$code" ;;
      0:*) printf 'ping %s: refused (HTTP %s)\n' "$what" "$code" ;;
      *) printf 'ping %s: failed (curl exit %s)\n' "$what" "$st" ;;
    esac >>"$2/notify.log"
  } </dev/null >/dev/null 2>&1 &
  sg_notify_ping_pid=$!
  [ "$m" = 1 ] || set +m
}

# sg_notify_run EVENT STATUS OUTCOME DIR: the command, detached, with a time limit.
sg_notify_run() {
  local log=$4/notify.log limit=${sg_notify_timeout:-30} m=0 pid
  case $- in *m*) m=1 ;; esac
  set -m
  {
    sg_notify_bg
    SCHEDGEN_EVENT=$1 SCHEDGEN_EXIT_CODE=$2 SCHEDGEN_OUTCOME=$3
    SCHEDGEN_STDERR_LOG=$4/stderr.log
    export SCHEDGEN_EVENT SCHEDGEN_EXIT_CODE SCHEDGEN_OUTCOME SCHEDGEN_STDERR_LOG
    if [ -r "$4/stderr.log" ]; then tail -n 20 "$4/stderr.log"; fi | sg_notify_cmd
    printf 'notify %s: command exit %s\n' "$1" "$?"
  } </dev/null >>"$log" 2>&1 &
  pid=$!
  {
    sg_notify_bg
    local n=0
    while [ "$n" -lt "$limit" ] && kill -0 "$pid" 2>/dev/null; do
      sleep 1
      n=$((n + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM -- "-$pid" 2>/dev/null
      printf 'notify %s: command killed after %ss\n' "$1" "$limit" >>"$log"
      sleep 2
      kill -KILL -- "-$pid" 2>/dev/null
    fi
  } </dev/null >/dev/null 2>&1 &
  [ "$m" = 1 ] || set +m
}

sg_notify_start_now() {
  sg_notify_ping start "$1"
}

# sg_notify_event STATUS LOG_DIR: sets sg_notify_ev to failure, recovery or '', and keeps
# LOG_DIR/.notify-failed (there while the last run failed) when `on` has recovery.
sg_notify_event() {
  local on=" ${sg_notify_on-} "
  sg_notify_ev=''
  if [ "$1" != 0 ]; then
    case $on in *" failure "*) sg_notify_ev=failure ;; esac
    case $on in
      *" recovery "*) [ -e "$2/.notify-failed" ] || : 2>/dev/null >"$2/.notify-failed" ;;
    esac
  else
    case $on in
      *" recovery "*)
        if [ -e "$2/.notify-failed" ]; then
          sg_notify_ev=recovery
          rm -f "$2/.notify-failed"
        fi ;;
    esac
  fi
}

sg_notify_finish_now() {
  local dir=${4:-$3}
  if [ -n "${sg_ping_url-}" ]; then
    case $1 in
      0) sg_notify_ping '' "$dir" ;;
      ''|*[!0-9]*) sg_notify_ping fail "$dir" ;;
      *) sg_notify_ping "$1" "$dir" ;;
    esac
  fi
  sg_notify_event "$1" "$3"
  if [ -n "$sg_notify_ev" ] && declare -F sg_notify_cmd >/dev/null; then
    sg_notify_run "$sg_notify_ev" "$1" "$2" "$dir"
  fi
  return 0
}

# shellcheck disable=SC2034  # read by the job file
sg_notify_read=1   # the end: all of it was read (the job file checks)
