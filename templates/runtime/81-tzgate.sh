# The time-zone gate of a job with `timezone` (no forks but one `date`).
#
# cron and launchd know only the host's local time, so a job with `timezone` is fired at
# every host minute that can match in the job's zone (schedgen/tzwiden.py); this gate
# tells which of those fires are real firings, by the zone's own clock. It reads the job's
# zone, never the host's, so a host that changes zone does not change what runs.
#
# Settings (set by the job file, schedgen/render/tzgate.py; lists are space-padded
# " 1 2 3 " or "*" for every value, one array element per cron expression):
#   sg_tz_zone   IANA zone name               sg_tz_n     number of expressions
#   sg_tz_min[]  minutes 0-59                 sg_tz_hour[] hours 0-23
#   sg_tz_dom[]  days of month 1-31           sg_tz_mon[]  months 1-12
#   sg_tz_dow[]  weekdays 0-6 (0 = Sunday)    sg_tz_or[]   1: cron's OR of the day fields
#   sg_tz_fixed[] 1: fixed wall time (minute and hour fields not starting with '*')
#   sg_tz_gaps   " YYYYmmddHHMM ... ": zone-local instants right after a spring-forward
#                gap that a fixed-time firing inside the gap moves to
#   sg_tz_state  file holding the zone-local minute of the last fixed-time firing run
#
# sg_tz_gate returns 0: run now; 1: not a firing now (exit 0 at once, write nothing);
# 2: the zone is unknown on this host (a precondition failure). A run in the foreground
# (`schedgen run`, SCHEDGEN_FOREGROUND=1) is never gated.
# shellcheck shell=bash disable=SC2154

# sg_tz_main: the gate's answer: a fire that is not a firing ends here (exit 0), before
# anything is written; an unknown zone is exit 78.
sg_tz_main() {
  sg_tz_gate
  case $? in
    1) exit 0 ;;
    2) exit 78 ;;
  esac
}

# sg_tz_in VALUE LIST: is VALUE in the space-padded LIST (or is LIST "*")?
sg_tz_in() {
  case $2 in
    '*' | *" $1 "*) return 0 ;;
  esac
  return 1
}

# sg_tz_now: the zone-local time as sg_tz_y sg_tz_mo sg_tz_d sg_tz_h sg_tz_mi (no leading
# zeros) sg_tz_w, sg_tz_key (YYYYmmddHHMM) and sg_tz_lmin (minutes on the local clock
# since 1970-01-01, for telling that the clock went back).
# shellcheck disable=SC2154  # the job file's settings (a zoned job's only)
sg_tz_now() {
  local now era yoe doy y IFS=' '
  now=$(TZ=$sg_tz_zone date '+%Y %m %d %H %M %w') || return 1
  # shellcheck disable=SC2086 # split the fields on purpose
  set -- $now
  sg_tz_key=$1$2$3$4$5
  sg_tz_y=$1 sg_tz_mo=${2#0} sg_tz_d=${3#0} sg_tz_h=${4#0} sg_tz_mi=${5#0} sg_tz_w=$6
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
  sg_tz_in "$sg_tz_mo" "${sg_tz_mon[$1]}" || return 1
  if [ "${sg_tz_or[$1]}" = 1 ]; then
    sg_tz_in "$sg_tz_d" "${sg_tz_dom[$1]}" || sg_tz_in "$sg_tz_w" "${sg_tz_dow[$1]}"
  else
    sg_tz_in "$sg_tz_d" "${sg_tz_dom[$1]}" && sg_tz_in "$sg_tz_w" "${sg_tz_dow[$1]}"
  fi
}

# sg_tz_gate: 0 run, 1 not now, 2 cannot tell (see the top of this file).
# shellcheck disable=SC2154  # the job file's settings (a zoned job's only)
sg_tz_gate() {
  local i=0 wild=0 fixed=0 last=''
  [ "${SCHEDGEN_FOREGROUND-}" != 1 ] || return 0
  # date falls back to UTC, silently, for a zone it does not have.
  if [ ! -f "${TZDIR:-/usr/share/zoneinfo}/$sg_tz_zone" ]; then
    printf 'schedgen: time zone %s is not in this host'\''s zone database\n' "$sg_tz_zone" >&2
    return 2
  fi
  sg_tz_now || return 2
  while [ "$i" -lt "$sg_tz_n" ]; do
    if sg_tz_match "$i"; then
      if [ "${sg_tz_fixed[$i]}" = 1 ]; then fixed=1; else wild=1; fi
    fi
    i=$((i + 1))
  done
  case $sg_tz_gaps in
    *" $sg_tz_key "*) fixed=1 ;;
  esac
  if [ "$fixed" = 1 ]; then
    # A fixed-time firing runs once per local minute: when the clock went back less than
    # three hours (a repeated hour; Debian cron's rule) it has run already.
    [ ! -f "$sg_tz_state" ] || read -r last <"$sg_tz_state" 2>/dev/null || last=''
    case $last in
      '' | 0?* | *[!0-9]*) last='' ;;   # 0...: bash would take it for octal
    esac
    if [ -n "$last" ] && [ $((last - sg_tz_lmin)) -ge 0 ] && [ $((last - sg_tz_lmin)) -lt 180 ]; then
      fixed=0
    else
      [ -d "${sg_tz_state%/*}" ] || mkdir -p "${sg_tz_state%/*}" 2>/dev/null
      [ -L "$sg_tz_state" ] || printf '%s\n' "$sg_tz_lmin" >"$sg_tz_state" 2>/dev/null
    fi
  fi
  [ "$wild" = 1 ] || [ "$fixed" = 1 ]
}

# A zoned job's gate runs as the runtime is read, right after the cut (the job file set
# its settings before sourcing it): a fire that is not a firing ends here, before bash
# parses the rest (bench_tz.py). A runtime of another interface leaves it to sg_main.
[ -z "${sg_tz_zone-}" ] || [ "${sg_api:-none}" != "${sg_runtime_api-}" ] || sg_tz_main
