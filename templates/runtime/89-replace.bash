# lock.on_busy = "replace" (read past the cut: only such jobs). The run holding the lock
# notes its wrapper's pid and its command's process group in .NAME.lock.run while its
# command runs, and clears the note as it ends. A run that finds the lock busy stops that
# run: TERM to its wrapper, which stops its command and records the run as interrupted
# (a queue item goes back as an interrupted attempt: the signal path of 40-command.bash);
# it waits for the lock while the wrapper does so (its own TERM-then-KILL, sg_grace), and
# after that bound it KILLs what is left and waits once more. A holder that left no note
# (a job sharing the lock without replace, or one still starting) is not stopped: busy.
# The note stays when its run is killed with kill -9: so that a pid the kernel has given
# to another process since is never signalled, it also holds both processes' start times
# (Linux: /proc/PID/stat, read with builtins), and only a process that still has its
# noted start time is signalled. Without /proc (macOS) a live pid is taken for the noted
# one (docs/policies.md).

# sg_replace_note: the note, "WRAPPER GROUP WSTART GSTART", as the command starts (sg_run).
sg_replace_note() {
  local ws
  sg_pstart "$$"
  ws=$sg_pst
  sg_pstart "$sg_cmd_pid"
  printf '%s %s %s %s\n' "$$" "$sg_cmd_pid" "$ws" "$sg_pst" 2>/dev/null >"$sg_lock_dir/.$sg_lock_name.lock.run"
}

# sg_pstart PID: sg_pst, the process's start time (clock ticks since boot: field 22 of
# /proc/PID/stat, counted after the last ")", as the name before it may hold blanks and
# parens); "-" when it cannot be read (no such process, or no /proc).
sg_pstart() {
  local s='' IFS=' '
  sg_pst=-
  IFS= read -r s 2>/dev/null <"/proc/$1/stat" || return 0
  s=${s##*) }
  set -f
  # shellcheck disable=SC2086  # split the fields on purpose
  set -- $s
  set +f
  [ "$#" -ge 20 ] || return 0
  shift 19
  sg_pst=$1
}

# sg_replace_who W G WSTART GSTART: sg_rw=1 while the wrapper W is still the noted
# process, sg_rg=1 while the group G's leader (the command's keeper) is; without /proc,
# a live W, and the group.
sg_replace_who() {
  sg_rw=0 sg_rg=0
  if [ -r "/proc/$$/stat" ]; then
    sg_pstart "$1"
    [ "$sg_pst" = - ] || [ "$sg_pst" != "$3" ] || sg_rw=1
    sg_pstart "$2"
    [ "$sg_pst" = - ] || [ "$sg_pst" != "$4" ] || sg_rg=1
  else
    ! kill -0 "$1" 2>/dev/null || sg_rw=1
    sg_rg=1
  fi
}

# sg_replace_clear: this run's note goes as it ends (sg_on_exit).
# shellcheck disable=SC2317  # called by sg_on_exit; shellcheck misses that when inlined
sg_replace_clear() {
  local w=''
  IFS=' ' read -r w _ 2>/dev/null <"$sg_lock_dir/.$sg_lock_name.lock.run" || return 0
  [ "$w" != "$$" ] || rm -f "$sg_lock_dir/.$sg_lock_name.lock.run"
}

# sg_replace FD: the lock on FD is busy: stop the run holding it, then take the lock.
# True once locked; false when there was nothing to stop or it still holds the lock.
sg_replace() {
  local w='' c='' ws='' cs='' bound=$((sg_grace / 10 + 5))
  IFS=' ' read -r w c ws cs _ 2>/dev/null <"$sg_lock_dir/.$sg_lock_name.lock.run" || return 1
  case $w$c in ''|*[!0-9]*) return 1 ;; esac
  [ "$w" != "$$" ] || return 1
  # A note none of whose processes is still there (a run killed with kill -9): busy.
  sg_replace_who "$w" "$c" "$ws" "$cs"
  [ "$sg_rw$sg_rg" != 00 ] || return 1
  sg_js "$sg_lock_name"
  sg_event replace ",\"lock\":$sg_j,\"replaced_pid\":$w"
  printf 'schedgen: %s: lock %s is busy; stopping the run that holds it (pid %s)\n' "$sg_job" "$sg_lock_name" "$w" >&2
  # The one TERM-then-KILL (sg_term_kill), a tenth of a second at a time: the lock, not
  # the processes, is what is waited for (the holder's parent may not have reaped it).
  sg_tk=0
  if [ "$sg_rw" = 1 ]; then sg_term_kill "$w" "$w" 1; else sg_term_kill "-$c" "-$c" 1; fi
  [ "$bound" -ge "${sg_lock_wait:-0}" ] || bound=$sg_lock_wait
  sg_lock "$1" "$bound" && return 0
  sg_tk=$sg_grace
  sg_replace_who "$w" "$c" "$ws" "$cs"   # again: either may have ended meanwhile
  [ "$sg_rg" = 0 ] || sg_term_kill "-$c" "-$c" $((sg_grace + 1))
  [ "$sg_rw" = 0 ] || sg_term_kill "$w" "$w" $((sg_grace + 2))
  sg_lock "$1" 5
}
