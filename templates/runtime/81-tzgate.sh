# The time-zone gate of a job with `timezone` (no forks but one `date`).
#
# cron and launchd know only the host's local time, so a job with `timezone` is fired at
# every host minute that can match in the job's zone (schedgen/tzwiden.py); this gate
# tells which of those fires are real firings, by the zone's own clock. It reads the job's
# zone, never the host's, so a host that changes zone does not change what runs.
#
# Settings (set by the job file, schedgen/render/tzgate.py; lists are space-padded
# " 1 2 3 " or "*" for every value, one array element per cron expression):
#   sg_tz_zone   IANA zone name, or localtime: the host's own clock, for a job without
#                a zone that catches up (every start is gated) or whose scheduler fires a
#                superset of its schedule (set only when the job file is called with
#                --gate: docs/launchd.md)
#                                             sg_tz_n     number of expressions
#   sg_tz_min[]  minutes 0-59                 sg_tz_hour[] hours 0-23
#   sg_tz_dom[]  days of month 1-31           sg_tz_mon[]  months 1-12
#   sg_tz_dow[]  weekdays 0-6 (0 = Sunday)    sg_tz_or[]   1: cron's OR of the day fields
#   sg_tz_fixed[] 1: fixed wall time (minute and hour fields not starting with '*')
#   sg_tz_gaps   " YYYYmmddHHMM ... ": zone-local instants right after a spring-forward
#                gap that a fixed-time firing inside the gap moves to
#   sg_tz_state  file holding the zone-local minute of the last fixed-time firing run
#   sg_tz_late   max_lateness, in seconds
#   sg_tz_catch  set for catch_up = "once": a late start more than this many seconds
#                late is recorded as a catch-up; none is made before a first firing ran
#
# sg_tz_gate returns 0: run now; 1: not a firing now (exit 0 at once, write nothing);
# 2: the zone is unknown on this host (a precondition failure). A run in the foreground
# (`schedgen run`, SCHEDGEN_FOREGROUND=1) is never gated.
# shellcheck shell=bash disable=SC2154

# sg_tz_main: the gate's answer: a fire that is not a firing ends here (exit 0), before
# anything is written; an unknown zone is exit 78; a start too late for its firing goes
# on to sg_main, which records it (sg_tz_dropped) and exits 0.
sg_tz_main() {
  sg_tz_gate
  case $? in
    1) exit 0 ;;
    2) exit 78 ;;
  esac
}

# sg_tz_dropped: the start came too late for its firing (sg_tz_gate returned 3): one
# "late" event says which firing was dropped, and the run ends there (exit 0).
# shellcheck disable=SC2154  # the job file's settings (a zoned job's only)
sg_tz_dropped() {
  sg_event late "${sg_tz_j},\"zone\":\"$sg_tz_zone\",\"max_lateness\":${sg_tz_late:-3600},\"outcome\":\"dropped\""
  [ "$sg_fg" != 1 ] || printf 'schedgen: %s: start dropped: too late for its firing\n' "$sg_job" >&2
  exit 0
}

# sg_tz_in VALUE LIST: is VALUE in the space-padded LIST (or is LIST "*")?
sg_tz_in() {
  case $2 in
    '*' | *" $1 "*) return 0 ;;
  esac
  return 1
}

# sg_tz_now: the zone-local time as sg_tz_y sg_tz_mo sg_tz_d sg_tz_h sg_tz_mi (no leading
# zeros) sg_tz_w, sg_tz_key (YYYYmmddHHMM), sg_tz_lmin (minutes on the local clock
# since 1970-01-01, for telling that the clock went back), sg_tz_sec (seconds into the
# minute) and sg_tz_rmin (real minutes since the epoch); `date`'s own answer in sg_tz_t.
# shellcheck disable=SC2154  # the job file's settings (a zoned job's only)
sg_tz_now() {
  if [ "$sg_tz_zone" = localtime ]; then
    sg_tz_t=$(date '+%Y %m %d %H %M %w %S %s') || return 1   # the host's clock, as cron's and launchd's
  else
    sg_tz_t=$(TZ=$sg_tz_zone date '+%Y %m %d %H %M %w %S %s') || return 1
  fi
  sg_tz_at
}

# sg_tz_at: sg_tz_y.. from the time `date` gave (sg_tz_t), again after a walk moved them.
sg_tz_at() {
  local era yoe doy y IFS=' '
  # shellcheck disable=SC2086 # split the fields on purpose
  set -- $sg_tz_t
  sg_tz_key=$1$2$3$4$5
  sg_tz_y=$1 sg_tz_mo=${2#0} sg_tz_d=${3#0} sg_tz_h=${4#0} sg_tz_mi=${5#0} sg_tz_w=$6
  sg_tz_sec=${7#0} sg_tz_rmin=$(($8 / 60))
  # Days from the civil date (H. Hinnant's algorithm), without `date -d`.
  y=$((sg_tz_y - (sg_tz_mo <= 2)))
  era=$((y / 400))
  yoe=$((y - era * 400))
  doy=$(((153 * (sg_tz_mo + (sg_tz_mo > 2 ? -3 : 9)) + 2) / 5 + sg_tz_d - 1))
  sg_tz_lmin=$(((era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468) * 1440 \
    + sg_tz_h * 60 + sg_tz_mi))
}

# sg_tz_match I: does the zone-local time match expression I (Debian's day rule)?
# shellcheck disable=SC2154  # the job file's settings (a zoned job's only)
sg_tz_match() {
  sg_tz_in "$sg_tz_mi" "${sg_tz_min[$1]}" || return 1
  sg_tz_in "$sg_tz_h" "${sg_tz_hour[$1]}" || return 1
  sg_tz_day "$1"
}

# sg_tz_day I: does the zone-local day match expression I?
# shellcheck disable=SC2154  # the job file's settings (a zoned job's only)
sg_tz_day() {
  sg_tz_in "$sg_tz_mo" "${sg_tz_mon[$1]}" || return 1
  if [ "${sg_tz_or[$1]}" = 1 ]; then
    sg_tz_in "$sg_tz_d" "${sg_tz_dom[$1]}" || sg_tz_in "$sg_tz_w" "${sg_tz_dow[$1]}"
  else
    sg_tz_in "$sg_tz_d" "${sg_tz_dom[$1]}" && sg_tz_in "$sg_tz_w" "${sg_tz_dow[$1]}"
  fi
}

# sg_tz_kinds: sg_tz_fx / sg_tz_wd: 1 when a fixed-time / wildcard expression matches
# the zone-local time in sg_tz_y.. (a moved gap firing is a fixed one).
# shellcheck disable=SC2154  # the job file's settings (a zoned job's only)
sg_tz_kinds() {
  local i=0
  sg_tz_fx=0 sg_tz_wd=0
  while [ "$i" -lt "$sg_tz_n" ]; do
    if sg_tz_match "$i"; then
      if [ "${sg_tz_fixed[$i]}" = 1 ]; then sg_tz_fx=1; else sg_tz_wd=1; fi
    fi
    i=$((i + 1))
  done
  case $sg_tz_gaps in
    "  ") ;;
    *" $sg_tz_key "*) sg_tz_fx=1 ;;
  esac
}

# sg_tz_gate: 0 run, 1 not now, 2 cannot tell, 3 a start too late for its firing (see
# the top of this file). A start in a minute with no firing belongs to the latest firing
# before it (found by walking the zone's clock back, skipping days and hours no
# expression has): it runs that firing when it is less than sg_tz_late seconds late and
# the firing has not run yet. The state file holds "LAST RLAST": the zone-local minute
# of the last fixed-time firing run, and the real minute (since the epoch) of the last
# firing run or dropped, so each firing runs once.
# Two starts of one firing (cron's @reboot line and the regular one in a boot minute,
# launchd's RunAtLoad and a calendar fire) must not both run it, whatever the job's lock
# (wait, replace, none): a start that finds a firing decides again under a lock on the
# state file (fd 6, held a few builtins long) and notes it there, so the second start
# reads the first one's note. A fire with no firing (most of a superset gate's) decides
# once, without the lock: it writes nothing.
# shellcheck disable=SC2154  # the job file's settings (a zoned job's only)
sg_tz_gate() {
  local st
  [ "${SCHEDGEN_FOREGROUND-}" != 1 ] || return 0
  # date falls back to UTC, silently, for a zone it does not have.
  if [ "$sg_tz_zone" != localtime ] && [ ! -f "${TZDIR:-/usr/share/zoneinfo}/$sg_tz_zone" ]; then
    printf 'schedgen: time zone %s is not in this host'\''s zone database\n' "$sg_tz_zone" >&2
    return 2
  fi
  sg_tz_now || return 2
  sg_tz_wr=0
  sg_tz_decide
  st=$?
  [ "$st" = 0 ] || [ "$st" = 3 ] || return "$st"
  # A state that is a link is neither written through (sg_tz_ran) nor locked; only a
  # plain file is opened (a FIFO would block the open).
  [ -d "${sg_tz_state%/*}" ] || mkdir -p "${sg_tz_state%/*}" 2>/dev/null
  if [ ! -L "$sg_tz_state" ] && { [ ! -e "$sg_tz_state" ] || [ -f "$sg_tz_state" ]; } &&
    { exec 6>>"$sg_tz_state"; } 2>/dev/null && ! sg_lock 6 30; then
    exec 6>&-
    printf 'schedgen: cannot lock the gate'\''s state %s\n' "$sg_tz_state" >&2
    return 2
  fi
  sg_tz_wr=1 sg_tz_drop=''
  sg_tz_at
  sg_tz_decide
  st=$?
  exec 6>&-
  return "$st"
}

# sg_tz_decide: the gate's verdict (as sg_tz_gate's) from the state file and the time in
# sg_tz_y..; with sg_tz_wr=1 a firing is noted in the state file (sg_tz_ran).
# shellcheck disable=SC2154  # the job file's settings (a zoned job's only)
sg_tz_decide() {
  local last='' rlast='' k=0 late=${sg_tz_late:-3600} cap nlast y mo d h mi w i hk lmin dk=''
  # "LAST RLAST", LAST empty for a job with no fixed-time firing run yet: split on the
  # one blank by hand (read would drop the empty field and take RLAST for LAST).
  [ ! -f "$sg_tz_state" ] || IFS= read -r last <"$sg_tz_state" 2>/dev/null || :
  case $last in
    *' '*) rlast=${last#* } last=${last%% *} ;;
  esac
  case $last in
    '' | 0?* | *[!0-9]*) last='' ;;   # 0...: bash would take it for octal
  esac
  case $rlast in
    '' | 0?* | *[!0-9]*) rlast='' ;;
  esac
  sg_tz_kinds
  lmin=$sg_tz_lmin nlast=$last
  if [ "$sg_tz_fx" = 1 ] || [ "$sg_tz_wd" = 1 ]; then
    # A fixed-time firing runs once per local minute: when the clock went back less than
    # three hours (a repeated hour; Debian cron's rule) it has run already.
    if [ "$sg_tz_fx" = 1 ]; then
      if [ -n "$last" ] && [ $((last - lmin)) -ge 0 ] && [ $((last - lmin)) -lt 180 ]; then
        sg_tz_fx=0
      else
        nlast=$lmin
      fi
    fi
    [ "$rlast" != "$sg_tz_rmin" ] || sg_tz_wd=0   # this very minute has run
    [ "$sg_tz_fx" = 1 ] || [ "$sg_tz_wd" = 1 ] || return 1
    sg_tz_ran "$nlast" "$sg_tz_rmin" "$sg_tz_key" "$sg_tz_sec"
    return 0
  fi
  # No firing in this minute: a late start? Without a state the walk stays within the
  # bound (a fresh job's first fire reports no firing from before it was set up); with
  # one it goes back to the last firing decided, a day past the bound at most.
  cap=$((late / 60 + 1440))
  [ -n "$rlast" ] || cap=$(((late - 1) / 60))
  # A job that catches up does so only once it has run a firing: a load at install time
  # has nothing to catch up.
  [ -n "$rlast" ] || [ -z "${sg_tz_catch-}" ] || return 1
  y=$sg_tz_y mo=$sg_tz_mo d=$sg_tz_d h=$sg_tz_h mi=$sg_tz_mi w=$sg_tz_w
  while :; do
    k=$((k + 1)) mi=$((mi - 1))
    if [ "$mi" -lt 0 ]; then
      mi=59 h=$((h - 1))
      if [ "$h" -lt 0 ]; then
        h=23 d=$((d - 1)) w=$(((w + 6) % 7)) dk=''
        if [ "$d" -lt 1 ]; then
          mo=$((mo - 1))
          [ "$mo" -ge 1 ] || { mo=12 y=$((y - 1)); }
          case $mo in
            4 | 6 | 9 | 11) d=30 ;;
            2) d=$((28 + (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))) ;;
            *) d=31 ;;
          esac
        fi
      fi
    fi
    [ "$k" -le "$cap" ] || return 1
    [ -z "$rlast" ] || [ $((sg_tz_rmin - k)) -gt "$rlast" ] || return 1   # it has run
    sg_tz_y=$y sg_tz_mo=$mo sg_tz_d=$d sg_tz_h=$h sg_tz_mi=$mi sg_tz_w=$w
    # A day, then an hour, that no expression (nor a moved gap firing) has: skipped whole.
    if [ -z "$dk" ]; then
      printf -v dk '%04d%02d%02d' "$y" "$mo" "$d"
      sg_tz_dayok=0
      case $sg_tz_gaps in *" $dk"*) sg_tz_dayok=2 ;; esac   # a moved firing that day
      i=0
      while [ "$sg_tz_dayok" = 0 ] && [ "$i" -lt "$sg_tz_n" ]; do
        ! sg_tz_day "$i" || sg_tz_dayok=1
        i=$((i + 1))
      done
    fi
    if [ "$sg_tz_dayok" = 0 ]; then
      k=$((k + h * 60 + mi)) mi=0 h=0
      continue
    fi
    if [ "$mi" = 59 ]; then
      i=0 sg_tz_hourok=0
      if [ "$sg_tz_dayok" = 2 ]; then
        printf -v hk '%s%02d' "$dk" "$h"
        case $sg_tz_gaps in *" $hk"*) sg_tz_hourok=1 ;; esac
      fi
      while [ "$sg_tz_hourok" = 0 ] && [ "$i" -lt "$sg_tz_n" ]; do
        ! sg_tz_in "$h" "${sg_tz_hour[$i]}" || sg_tz_hourok=1
        i=$((i + 1))
      done
      if [ "$sg_tz_hourok" = 0 ]; then
        k=$((k + 59)) mi=0
        continue
      fi
    fi
    printf -v sg_tz_key '%s%02d%02d' "$dk" "$h" "$mi"
    sg_tz_kinds
    [ "$sg_tz_fx" = 1 ] || [ "$sg_tz_wd" = 1 ] || continue
    lmin=$((sg_tz_lmin - k)) nlast=$last
    if [ "$sg_tz_fx" = 1 ] && [ "$sg_tz_wd" = 0 ]; then
      # A fixed-time firing of a repeated hour that has run (see above).
      if [ -n "$last" ] && [ $((last - lmin)) -ge 0 ] && [ $((last - lmin)) -lt 180 ]; then
        return 1
      fi
    fi
    [ "$sg_tz_fx" = 0 ] || nlast=$lmin
    sg_tz_ran "$nlast" $((sg_tz_rmin - k)) "$sg_tz_key" $((k * 60 + sg_tz_sec))
    # Later than on time (and its start delay): a catch-up, said in its records.
    [ -z "${sg_tz_catch-}" ] || [ $((k * 60 + sg_tz_sec)) -le "$sg_tz_catch" ] ||
      sg_tz_j=$sg_tz_j',"catch_up":true'

    [ $((k * 60 + sg_tz_sec)) -lt "$late" ] && return 0
    sg_tz_drop=1
    return 3
  done
}

# sg_tz_ran LAST RLAST KEY LATE: the firing KEY (zone-local YYYYmmddHHMM), LATE seconds
# late, is decided: noted in the state file (on the pass under its lock), and for the
# run's records as sg_tz_j.
# shellcheck disable=SC2154  # the job file's settings (a zoned job's only)
sg_tz_ran() {
  [ "$sg_tz_wr" != 1 ] || [ -L "$sg_tz_state" ] || { [ -e "$sg_tz_state" ] && [ ! -f "$sg_tz_state" ]; } ||
    printf '%s %s\n' "$1" "$2" >"$sg_tz_state" 2>/dev/null
  sg_tz_lsec=$4
  sg_tz_j=",\"firing\":\"${3:0:4}-${3:4:2}-${3:6:2}T${3:8:2}:${3:10:2}\",\"late\":$4"
}

# A zoned job's gate runs as the runtime is read, right after the cut (the job file set
# its settings before sourcing it): a fire that is not a firing ends here, before bash
# parses the rest (bench_tz.py). A runtime of another interface leaves it to sg_main.
[ -z "${sg_tz_zone-}" ] || [ "${sg_api:-none}" != "${sg_runtime_api-}" ] || sg_tz_main
