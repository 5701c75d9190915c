# Plain runs stop reading here: bash parses a sourced file as it goes, so what only a
# queue, a timeout, a smoke run, `schedgen run` or a zoned job needs costs a plain run
# nothing (inlined, --standalone, this line is a no-op and they are read anyway).
# sg_runtime_read: read to here (or to the end, which sets it too); the job file checks it,
# so that a runtime cut short is a message and exit 78, not a run of half of it.
# A paused job (sg_paused, 70-main.bash) and one with a start delay (sg_policy) read on.
[ -n "${sg_inbox:-}" ] || [ "${sg_timeout:-0}" != 0 ] || [ "${SCHEDGEN_SMOKE:-}" = 1 ] ||
  [ "${SCHEDGEN_FOREGROUND:-}" = 1 ] || [ -n "${sg_tz_zone:-}" ] || [ -n "$sg_paused" ] ||
  [ -n "${sg_policy:-}" ] ||
  { sg_runtime_read=1; return 0 2>/dev/null; }
