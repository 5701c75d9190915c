# Run policies read past the cut: pause and a start delay (docs/policies.md).
#
# Settings (the job file's): sg_pause_file  schedgen's pause file for the job (it exists
# only while the job is paused; one line: the epoch it ends at, or 0 for until resumed);
# sg_delay  a stable start delay in seconds (worked out at render time from the
# namespace, job and host); sg_delay_max  the bound of a fresh one (0: none).
# shellcheck shell=bash disable=SC2154

# sg_policy_start: a paused firing ends here, said as skipped; else the start delay.
sg_policy_start() {
  local until='' left
  if [ -n "${sg_paused-}" ]; then
    # Only a plain file is read (a FIFO would block the open for ever), one short line;
    # anything else, or a number past any date (bash would wrap it), is until resumed.
    [ ! -f "$sg_pause_file" ] || [ ! -r "$sg_pause_file" ] ||
      read -r -n 24 until <"$sg_pause_file" 2>/dev/null || :
    case $until in '' | *[!0-9]* | ???????????????????*) until=0 ;; esac
    until=$((10#$until))
    if [ "$until" = 0 ] || [ "$sg_epoch" -lt "$until" ]; then
      sg_event skipped "${sg_tz_j-},\"reason\":\"paused\",\"until\":$until,\"outcome\":\"skipped\""
      [ "$sg_fg" != 1 ] || printf 'schedgen: %s: paused; this firing is skipped\n' "$sg_job" >&2
      exit 0
    fi
  fi
  # A start delay: before the lock, never in the foreground or a smoke run.
  # Under systemd the timer's RandomizedDelaySec did it (SCHEDGEN_DELAYED, from the unit).
  [ "$sg_fg" != 1 ] && [ "$sg_smoke" != 1 ] && [ "${SCHEDGEN_DELAYED-}" != 1 ] || return 0
  left=${sg_delay:-0}
  if [ "${sg_delay_max:-0}" -gt 0 ]; then
    left=$(((RANDOM * 32768 + RANDOM) % (sg_delay_max + 1)))
  fi
  # A start the gate found late already (a catch-up) waits no longer than keeps it
  # within max_lateness: a delayed start is a late one.
  if [ -n "${sg_tz_lsec-}" ] && [ "$left" -gt $((${sg_tz_late:-3600} - 1 - sg_tz_lsec)) ]; then
    left=$((${sg_tz_late:-3600} - 1 - sg_tz_lsec))
  fi
  [ "$left" -gt 0 ] || return 0
  sg_delay_j=",\"delay\":$left"
  sleep "$left"
  sg_now
}
