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
    [ "$2" != empty ] || return 0
    [ -e "$3/.notify-failed" ] || return 0
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
sg_nl='
'

# --- Contract -------------------------------------------------------------------
#
# Settings, set by the job file before the calls (all optional, all may be unset):
#   sg_notify_on       events the channels are for, space-separated: "failure recovery"
#                      ("missed" is sent by `schedgen check --notify`, not by a run)
#   sg_notify_cmd      a FUNCTION, defined only when the job has a notify command;
#                      it runs with the payload's SCHEDGEN_* values in its environment
#                      and the tail of the run's stderr on stdin
#   sg_mail            addresses, space-separated: mailed through sendmail -t -i
#   sg_sendmail        the sendmail program ('': sendmail on PATH, /usr/sbin, /usr/lib)
#   sg_webhook         URL the payload is POSTed to, shaped by sg_webhook_format
#                      (json, slack, discord, teams)
#   sg_notify_after    failure alerts from the Nth failed run in a row on (1)
#   sg_notify_timeout  seconds one channel may take in all (tries included) before its
#                      process group is killed (30)
#   sg_ping_url        heartbeat URL: URL/start, URL on success, URL/<exit code> on failure
#   sg_ping_timeout    seconds one ping may take (5)
# Read from the wrapper (the runtime sets them): sg_job, sg_host, sg_run_id, sg_timeout,
# sg_start_epoch, sg_epoch, sg_max_attempts and, for a queue job, the last failed item
# (sg_nfy_item, sg_nfy_att, sg_nfy_to, sg_nfy_path, sg_nfy_rid, sg_nfy_rdir, sg_nfy_dur);
# SCHEDGEN_ATTEMPT / SCHEDGEN_MAX_ATTEMPTS when a plain job's run is one of several tries.
#
# Entry points (both return 0 at once; the work runs in the background):
#   sg_notify_start RUN_DIR
#       when the command starts: pings URL/start.
#   sg_notify_finish STATUS OUTCOME LOG_DIR [RUN_DIR]
#       when a run has ended (ok, failed, timeout, interrupted, precondition, empty; a
#       busy run is ignored): pings, and sends failure/recovery through the command,
#       mail and webhook. LOG_DIR holds the failed runs in a row (.notify-failed);
#       results go to RUN_DIR/notify.log, the payload to RUN_DIR/notify.json
#       (LOG_DIR/ when the run has no directory).
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
# ~/.curlrc (a proxy, a trace file, its own -w) out of it. So is the webhook URL.

# sg_notify_bg: the background context, entered as the first command of a `{ } &` group.
sg_notify_bg() {
  # The run's end ignores these (sg_on_exit, sg_stop), and an ignored signal stays ignored
  # across exec: the notify command's own timeout would have had to wait for its KILL.
  trap - INT TERM HUP
  exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
}

# sg_notify_rid: a fresh run ID for the heartbeat service (a UUID, from $RANDOM: no fork),
# paired by its start and finish pings.
sg_notify_rid() {
  printf -v sg_notify_rid '%04x%04x-%04x-4%03x-%04x-%04x%04x%04x' "$RANDOM" "$RANDOM" \
    "$RANDOM" $((RANDOM & 4095)) $(((RANDOM & 16383) | 32768)) "$RANDOM" "$RANDOM" "$RANDOM"
}

# sg_notify_ping SUFFIX DIR [BODY]: URL/SUFFIX (plain URL when SUFFIX is empty) with
# rid=<run ID>, in the background; with BODY (a file) POSTed as the ping's body, then
# removed. A ping waits for the one before it, so /start never arrives after the end.
sg_notify_ping() {
  local url=${sg_ping_url%%\?*} query='' what=${1:-success} m=0 prev=$sg_notify_ping_pid
  local body=${3-}
  case $sg_ping_url in *\?*) query=\?${sg_ping_url#*\?}\& ;; *) query=\? ;; esac
  query=${query}rid=${sg_notify_rid-}
  url=${url%/}
  [ -z "$1" ] || url=$url/$1
  url=$url$query
  if ! command -v curl >/dev/null 2>&1; then
    printf 'ping %s: not sent: curl not found on PATH\n' "$what" >>"$2/notify.log" 2>/dev/null
    [ -z "$body" ] || rm -f "$body"
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
    if [ -n "$body" ]; then
      code=$(printf 'url = "%s"\n' "$url" |
        curl -q -sS -o /dev/null -w '%{http_code}' -m "${sg_ping_timeout:-5}" \
          -H 'Content-Type: text/plain; charset=utf-8' --data-binary "@$body" -K - 2>/dev/null)
      st=$?
      rm -f "$body"
    else
      code=$(printf 'url = "%s"\n' "$url" |
        curl -q -sS -o /dev/null -w '%{http_code}' -m "${sg_ping_timeout:-5}" -K - 2>/dev/null)
      st=$?
    fi
    case $st:$code in
      0:2??) printf 'ping %s: sent (HTTP %s)\n' "$what" "$code" ;;
      0:*) printf 'ping %s: refused (HTTP %s)\n' "$what" "$code" ;;
      *) printf 'ping %s: failed (curl exit %s)\n' "$what" "$st" ;;
    esac >>"$2/notify.log"
  } </dev/null >/dev/null 2>&1 &
  sg_notify_ping_pid=$!
  [ "$m" = 1 ] || set +m
}

# sg_notify_tail FILE BYTES [LINES]: the end of FILE as text safe for a mail and JSON:
# no control characters but newlines (tabs as spaces), lines cut at 900 bytes, invalid
# UTF-8 dropped (iconv -c, where there is one).
sg_notify_tail() {
  [ -r "$1" ] || return 0
  if [ -n "${3-}" ]; then tail -n "$3" "$1"; else tail -c "$2" "$1"; fi | tail -c "$2" |
    cut -b 1-900 | LC_ALL=C tr -d '\000-\010\013-\037\177' | LC_ALL=C tr '\011' ' ' |
    if command -v iconv >/dev/null 2>&1; then iconv -c -f UTF-8 -t UTF-8 2>/dev/null; else cat; fi
}

# sg_notify_esc TEXT: TEXT as a JSON string in sg_j: backslashes, quotes and newlines by
# expansion (the stderr tail has no other control characters: sg_notify_tail), any
# other control character one at a time.
sg_notify_esc() {
  local s=${1//\\/\\\\} out='' c
  s=${s//\"/\\\"}
  s=${s//$sg_nl/\\n}
  case $s in
    *[[:cntrl:]]*) ;;
    *) sg_j="\"$s\""; return 0 ;;
  esac
  while [ -n "$s" ]; do
    c=${s:0:1}
    s=${s:1}
    case $c in
      [[:cntrl:]]) printf -v c '\\u%04x' "'$c"; out=$out$c ;;
      *) out=$out$c ;;
    esac
  done
  sg_j="\"$out\""
}

# sg_notify_run WHAT LOG FUNCTION ARGS...: FUNCTION in the background, in a process
# group of its own, with the payload's SCHEDGEN_* values exported; killed (its whole
# group) after sg_notify_timeout seconds. Its output goes to LOG.
sg_notify_run() {
  local what=$1 log=$2 limit=${sg_notify_timeout:-30} m=0 pid
  shift 2
  case $- in *m*) m=1 ;; esac
  set -m
  {
    sg_notify_bg
    sg_notify_export
    "$@"
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
      printf '%s killed after %ss\n' "$what" "$limit" >>"$log"
      sleep 2
      kill -KILL -- "-$pid" 2>/dev/null
    fi
  } </dev/null >/dev/null 2>&1 &
  [ "$m" = 1 ] || set +m
}

# sg_notify_cmd_now EVENT: the notify command, the tail of stderr on its stdin.
sg_notify_cmd_now() {
  if [ -n "$sg_p_tail" ]; then printf '%s\n' "$sg_p_tail"; fi | sg_notify_cmd
  printf 'notify %s: command exit %s\n' "$1" "$?"
}

# sg_notify_tries WHAT FUNCTION: FUNCTION (0 sent, 1 failed, 2 refused: no retry) up to
# 3 times, 2 then 4 seconds apart; each try said in the log.
sg_notify_tries() {
  local n=1 st
  while :; do
    "$2"
    st=$?
    case $st in
      0) printf '%s: sent (%s; try %s of 3)\n' "$1" "$sg_nt" "$n"; return 0 ;;
      2) printf '%s: refused (%s); not tried again\n' "$1" "$sg_nt"; return 1 ;;
    esac
    printf '%s: failed (%s; try %s of 3)\n' "$1" "$sg_nt" "$n"
    [ "$n" -lt 3 ] || return 1
    sleep $((n * 2))
    n=$((n + 1))
  done
}

# sg_notify_mail_one: one try of the mail through sendmail (sg_nt: what it said).
sg_notify_mail_one() {
  local prog=${sg_sendmail-} out
  if [ -z "$prog" ]; then
    prog=$(command -v sendmail 2>/dev/null) || prog=''
    [ -n "$prog" ] || { [ ! -x /usr/sbin/sendmail ] || prog=/usr/sbin/sendmail; }
    [ -n "$prog" ] || { [ ! -x /usr/lib/sendmail ] || prog=/usr/lib/sendmail; }
  fi
  if [ -z "$prog" ] || ! command -v "$prog" >/dev/null 2>&1; then
    sg_nt="no sendmail program: set notify.sendmail, or install an MTA (msmtp, postfix)"
    return 2
  fi
  out=$("$prog" -t -i <"$sg_p_mail" 2>&1)
  sg_nt="$prog exit $?"
  [ "$sg_nt" != "$prog exit 0" ] || return 0
  sg_nt="$sg_nt: $(printf '%s' "$out" | tail -n 1 | cut -b 1-200)"
  return 1
}

# sg_notify_hook_one: one try of the webhook POST (sg_nt: what it said).
sg_notify_hook_one() {
  local code st
  if ! command -v curl >/dev/null 2>&1; then
    sg_nt="curl not found on PATH"
    return 2
  fi
  code=$(printf 'url = "%s"\n' "$sg_webhook" |
    curl -q -sS -o /dev/null -w '%{http_code}' -m "${sg_webhook_time:-10}" \
      -H 'Content-Type: application/json' --data-binary "@$sg_p_body" -K - 2>/dev/null)
  st=$?
  sg_nt="HTTP $code"
  [ "$st" = 0 ] || { sg_nt="curl exit $st"; return 1; }
  case $code in
    2??) return 0 ;;
    408|429|5??) return 1 ;;
    *) return 2 ;;
  esac
}

sg_notify_mail_now() { sg_notify_tries "mail $1" sg_notify_mail_one; }
sg_notify_hook_now() { sg_notify_tries "webhook $1" sg_notify_hook_one; }

sg_notify_start_now() {
  sg_notify_rid
  sg_notify_ping start "$1"
}

# sg_notify_healthy: nothing of the job's is in its queue's failed/ (a plain job: true).
sg_notify_healthy() {
  local f
  [ -n "${sg_failed-}" ] && [ -d "$sg_failed" ] || return 0
  for f in "$sg_failed"/*; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    return 1
  done
  return 0
}

# sg_notify_event STATUS OUTCOME LOG_DIR: sets sg_notify_ev to failure, recovery or '',
# and sg_p_fails to the failed runs in a row. LOG_DIR/.notify-failed holds that count
# while the last run failed; it goes with the first ok run after which nothing of the
# job's is left in failed/ (a recovery), and stays while something is.
sg_notify_event() {
  local on=" ${sg_notify_on-} " n=0 after=${sg_notify_after:-1}
  sg_notify_ev='' sg_p_fails=0
  [ "$2" != empty ] || return 0
  if [ -e "$3/.notify-failed" ]; then
    read -r n <"$3/.notify-failed" 2>/dev/null
    case $n in ''|*[!0-9]*) n=1 ;; esac
  fi
  if [ "$1" != 0 ]; then
    n=$((n + 1))
    sg_p_fails=$n
    case $on in *" failure "*|*" recovery "*) printf '%s\n' "$n" 2>/dev/null >"$3/.notify-failed" ;; esac
    [ "$n" -lt "$after" ] || case $on in *" failure "*) sg_notify_ev=failure ;; esac
  elif [ -e "$3/.notify-failed" ]; then
    sg_notify_healthy || return 0
    rm -f "$3/.notify-failed"
    sg_p_fails=$n
    [ "$n" -lt "$after" ] || case $on in *" recovery "*) sg_notify_ev=recovery ;; esac
  fi
}

# sg_notify_payload EVENT STATUS OUTCOME DIR LOG_DIR: the payload's values (sg_p_*), its JSON
# (DIR/notify.json) and, for mail and webhook, the mail (DIR/notify.mail) and the body.
sg_notify_payload() {
  local ev=$1 dir=$4 rdir=${sg_nfy_rdir-}
  sg_p_job=${sg_job:-${SCHEDGEN_JOB-}} sg_p_host=${sg_host:-${HOSTNAME:-localhost}}
  sg_p_logs=${5:-${sg_log_dir-}}
  local att=${SCHEDGEN_ATTEMPT-} max=${SCHEDGEN_MAX_ATTEMPTS-}
  sg_p_rid=${sg_nfy_rid:-${sg_run_id:-${SCHEDGEN_RUN_ID-}}} sg_p_item='' sg_p_to='' sg_p_path=''
  sg_p_code=$2 sg_p_out=$3 sg_p_dur=${sg_nfy_dur-}
  [ -n "$rdir" ] || rdir=$dir
  [ -n "$sg_p_dur" ] || sg_p_dur=$(( ${sg_epoch:-0} - ${sg_start_epoch:-0} ))
  if [ -n "${sg_nfy_item-}" ] && [ "$ev" = failure ]; then
    # A queue job: the item whose run failed last in this call is the news.
    sg_p_item=$sg_nfy_item sg_p_to=${sg_nfy_to-} sg_p_path=${sg_nfy_path-}
    sg_p_code=${sg_nfy_code-} sg_p_out=${sg_nfy_out-}
    att=${sg_nfy_att-} max=${sg_max_attempts-}
  fi
  case $att in ''|*[!0-9]*) att=1 ;; esac
  case $max in ''|*[!0-9]*) max=$att ;; esac
  [ "$max" -ge "$att" ] || max=$att
  sg_p_att=$att sg_p_max=$max sg_p_retry=0
  if [ -n "$sg_p_item" ]; then
    [ "$sg_p_to" != inbox ] || sg_p_retry=1
  elif [ "$ev" = failure ] && [ "$att" -lt "$max" ]; then
    sg_p_retry=1
  fi
  sg_p_rdir=$rdir
  { [ -d "$rdir" ] && [ "$rdir" != "$sg_p_logs" ]; } || sg_p_rdir=''
  sg_p_tail=''
  [ -z "$sg_p_rdir" ] || sg_p_tail=$(sg_notify_tail "$sg_p_rdir/stderr.log" 4000 20)
  local what
  case $sg_p_out in
    ok) what="ok" ;;
    timeout) what="timed out after ${sg_timeout:-?}s (killed)"
      sg_p_tail="${sg_p_tail:+$sg_p_tail$sg_nl}schedgen: timed out after ${sg_timeout:-?}s; killed" ;;
    interrupted) what="was interrupted (exit $sg_p_code)" ;;
    precondition) what="could not start: a precondition failed (exit 78; see the wrapper's log)" ;;
    *) what="failed (exit $sg_p_code)" ;;
  esac
  if [ "$ev" = recovery ]; then
    sg_p_msg="$sg_p_job recovered on $sg_p_host: ok after $sg_p_fails failed run(s)"
  else
    sg_p_msg="$sg_p_job $what on $sg_p_host after ${sg_p_dur}s"
    [ "$sg_p_max" -le 1 ] || sg_p_msg="$sg_p_msg; attempt $sg_p_att of $sg_p_max"
    case $sg_p_to in
      inbox) sg_p_msg="$sg_p_msg; $sg_p_item will be retried" ;;
      failed) sg_p_msg="$sg_p_msg; $sg_p_item moved to $sg_p_path" ;;
      processing) sg_p_msg="$sg_p_msg; $sg_p_item stuck in $sg_p_path" ;;
      gone) sg_p_msg="$sg_p_msg; $sg_p_item is gone (the command moved it)" ;;
      *) [ "$sg_p_retry" = 0 ] || sg_p_msg="$sg_p_msg; will retry" ;;
    esac
    [ "$sg_p_fails" -le 1 ] || sg_p_msg="$sg_p_msg ($sg_p_fails failed runs in a row)"
  fi
  # One line: it is a mail's Subject too (an item's name may hold a newline).
  sg_p_msg=${sg_p_msg//[[:cntrl:]]/?}
  sg_p_json=$dir/notify.json
  sg_notify_json "$ev"
}

# sg_notify_json EVENT: the payload as JSON (docs/outcomes.md; schedgen.notify/1) in
# sg_p_json, the webhook's body in sg_p_body, the mail in sg_p_mail.
sg_notify_json() {
  local j item=null rdir=null retry=false again=''
  [ "$sg_p_retry" = 0 ] || again=', will retry'
  sg_notify_esc "$sg_p_job"; j="{\"schema\":\"schedgen.notify/1\",\"event\":\"$1\",\"job\":$sg_j"
  sg_notify_esc "$sg_p_host"; j="$j,\"host\":$sg_j"
  sg_notify_esc "$sg_p_rid"; j="$j,\"run_id\":$sg_j,\"outcome\":\"$sg_p_out\",\"exit_code\":${sg_p_code:-null}"
  [ "$sg_p_retry" = 0 ] || retry=true
  j="$j,\"attempt\":$sg_p_att,\"max_attempts\":$sg_p_max,\"will_retry\":$retry"
  if [ -n "$sg_p_item" ]; then
    sg_notify_esc "$sg_p_item"; item="{\"name\":$sg_j"
    sg_notify_esc "$sg_p_path"; item="$item,\"to\":\"$sg_p_to\",\"path\":$sg_j}"
  fi
  j="$j,\"item\":$item,\"duration\":$sg_p_dur"
  if [ "$sg_p_out" = timeout ]; then j="$j,\"timed_out_after\":${sg_timeout:-null}"; else j="$j,\"timed_out_after\":null"; fi
  j="$j,\"failures_in_a_row\":$sg_p_fails"
  [ -z "$sg_p_rdir" ] || { sg_notify_esc "$sg_p_rdir"; rdir=$sg_j; }
  j="$j,\"run_dir\":$rdir"
  sg_notify_esc "$sg_p_logs"; j="$j,\"log_dir\":$sg_j"
  sg_notify_esc "$sg_p_tail"; j="$j,\"stderr_tail\":$sg_j"
  sg_notify_esc "$sg_p_msg"; j="$j,\"message\":$sg_j,\"problem\":null"
  j="$j,\"time\":\"${sg_iso-}\"}"
  printf '%s\n' "$j" >"$sg_p_json" 2>/dev/null || return 0
  sg_p_body=$sg_p_json
  if [ -n "${sg_webhook-}" ] && [ "${sg_webhook_format:-json}" != json ]; then
    sg_p_body=${sg_p_json%.json}.$sg_webhook_format.json
    local title text=$sg_p_msg
    [ -z "$sg_p_tail" ] || text="$text$sg_nl$sg_nl$sg_p_tail"
    title="schedgen: $sg_p_job: $1"
    case $sg_webhook_format in
      slack)
        [ -z "$sg_p_tail" ] || text="$sg_p_msg$sg_nl\`\`\`$sg_nl$sg_p_tail$sg_nl\`\`\`"
        sg_notify_esc "$title: $text"; j="{\"text\":$sg_j}" ;;
      discord)
        [ -z "$sg_p_tail" ] || text="$sg_p_msg$sg_nl\`\`\`$sg_nl${sg_p_tail:0:1500}$sg_nl\`\`\`"
        sg_notify_esc "$title: $text"; j="{\"username\":\"schedgen\",\"content\":$sg_j}" ;;
      teams)
        sg_notify_esc "$title"; title=$sg_j
        sg_notify_esc "$text"
        j="{\"type\":\"message\",\"attachments\":[{\"contentType\":\"application/vnd.microsoft.card.adaptive\",\"content\":{\"\$schema\":\"http://adaptivecards.io/schemas/adaptive-card.json\",\"type\":\"AdaptiveCard\",\"version\":\"1.4\",\"body\":[{\"type\":\"TextBlock\",\"text\":$title,\"weight\":\"Bolder\",\"wrap\":true},{\"type\":\"TextBlock\",\"text\":$sg_j,\"wrap\":true}]}}]}" ;;
    esac
    printf '%s\n' "$j" >"$sg_p_body" 2>/dev/null
  fi
  [ -n "${sg_mail-}" ] || return 0
  sg_p_mail=${sg_p_json%.json}.mail
  local to='' a
  for a in $sg_mail; do to="${to:+$to, }$a"; done
  {
    printf 'To: %s\n' "$to"
    printf 'Subject: [schedgen] %s\n' "$sg_p_msg" | cut -b 1-200
    printf 'MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n'
    printf 'X-Schedgen-Job: %s\nX-Schedgen-Event: %s\nX-Schedgen-Run-Id: %s\n\n' "$sg_p_job" "$1" "$sg_p_rid"
    printf '%s\n\n' "$sg_p_msg"
    printf 'job:           %s\nevent:         %s\nhost:          %s\nrun id:        %s\n' \
      "$sg_p_job" "$1" "$sg_p_host" "$sg_p_rid"
    printf 'outcome:       %s\nexit code:     %s\nattempt:       %s of %s%s\n' "$sg_p_out" \
      "$sg_p_code" "$sg_p_att" "$sg_p_max" "$again"
    [ -z "$sg_p_item" ] || printf 'item:          %s -> %s: %s\n' "$sg_p_item" "$sg_p_to" "$sg_p_path"
    printf 'duration:      %ss\nfailed in a row: %s\n' "$sg_p_dur" "$sg_p_fails"
    printf 'run directory: %s\nlog directory: %s\n' "${sg_p_rdir:--}" "$sg_p_logs"
    [ -z "$sg_p_tail" ] || printf '\nLast lines of stderr:\n%s\n' "$sg_p_tail"
  } 2>/dev/null | sed 's/^\.$/. /' >"$sg_p_mail"
}

# sg_notify_export: the payload as SCHEDGEN_* values, for the command (and whatever
# sendmail runs).
sg_notify_export() {
  SCHEDGEN_EVENT=$sg_p_ev SCHEDGEN_EXIT_CODE=$sg_p_code SCHEDGEN_OUTCOME=$sg_p_out
  SCHEDGEN_STDERR_LOG=${sg_p_rdir:+$sg_p_rdir/stderr.log}
  SCHEDGEN_HOST=$sg_p_host SCHEDGEN_RUN_ID=$sg_p_rid SCHEDGEN_ATTEMPT=$sg_p_att
  SCHEDGEN_MAX_ATTEMPTS=$sg_p_max SCHEDGEN_WILL_RETRY=$sg_p_retry
  SCHEDGEN_ITEM=${SCHEDGEN_ITEM-}
  [ -z "$sg_p_item" ] || SCHEDGEN_ITEM=$sg_p_path   # where it is now
  SCHEDGEN_ITEM_NAME=$sg_p_item SCHEDGEN_ITEM_TO=$sg_p_to
  SCHEDGEN_DURATION=$sg_p_dur SCHEDGEN_RUN_DIR=$sg_p_rdir SCHEDGEN_LOG_DIR=$sg_p_logs
  SCHEDGEN_MESSAGE=$sg_p_msg SCHEDGEN_FAILURES=$sg_p_fails
  SCHEDGEN_TIMED_OUT_AFTER='' SCHEDGEN_PAYLOAD=''
  [ "$sg_p_out" != timeout ] || SCHEDGEN_TIMED_OUT_AFTER=${sg_timeout-}
  [ ! -f "$sg_p_json" ] || SCHEDGEN_PAYLOAD=$sg_p_json
  export SCHEDGEN_EVENT SCHEDGEN_EXIT_CODE SCHEDGEN_OUTCOME SCHEDGEN_STDERR_LOG SCHEDGEN_HOST \
    SCHEDGEN_RUN_ID SCHEDGEN_ATTEMPT SCHEDGEN_MAX_ATTEMPTS SCHEDGEN_WILL_RETRY SCHEDGEN_ITEM \
    SCHEDGEN_ITEM_NAME SCHEDGEN_ITEM_TO SCHEDGEN_DURATION SCHEDGEN_RUN_DIR SCHEDGEN_LOG_DIR \
    SCHEDGEN_MESSAGE SCHEDGEN_FAILURES SCHEDGEN_TIMED_OUT_AFTER SCHEDGEN_PAYLOAD
}

sg_notify_finish_now() {
  local dir=${4:-$3} body=''
  sg_p_code='' sg_p_out='' sg_p_body='' sg_p_mail='' sg_p_json=''
  if [ -n "${sg_ping_url-}" ]; then
    # The finish ping's body: the last 10 kB of the run's stdout, then its stderr.
    if [ -n "${4-}" ] && [ -d "$4" ] && command -v curl >/dev/null 2>&1; then
      body=$4/.ping-body
      { tail -c 10000 "$4/stdout.log"; tail -c 10000 "$4/stderr.log"; } 2>/dev/null |
        tail -c 10000 >"$body" 2>/dev/null || body=''
    fi
    [ -n "${sg_notify_rid-}" ] || sg_notify_rid
    case $1 in
      0) sg_notify_ping '' "$dir" "$body" ;;
      ''|*[!0-9]*) sg_notify_ping fail "$dir" "$body" ;;
      *) sg_notify_ping "$1" "$dir" "$body" ;;
    esac
  fi
  sg_notify_event "$1" "$2" "$3"
  [ -n "$sg_notify_ev" ] || return 0
  sg_p_ev=$sg_notify_ev
  sg_notify_payload "$sg_notify_ev" "$1" "$2" "$dir" "$3"
  if declare -F sg_notify_cmd >/dev/null; then
    sg_notify_run "notify $sg_p_ev: command" "$dir/notify.log" sg_notify_cmd_now "$sg_p_ev"
  fi
  if [ -n "${sg_mail-}" ] && [ -n "$sg_p_mail" ] && [ -f "$sg_p_mail" ]; then
    sg_notify_run "mail $sg_p_ev:" "$dir/notify.log" sg_notify_mail_now "$sg_p_ev"
  fi
  if [ -n "${sg_webhook-}" ] && [ -n "$sg_p_body" ] && [ -f "$sg_p_body" ]; then
    sg_notify_run "webhook $sg_p_ev:" "$dir/notify.log" sg_notify_hook_now "$sg_p_ev"
  fi
  return 0
}

# shellcheck disable=SC2034  # read by the job file
sg_notify_read=1   # the end: all of it was read (the job file checks)
