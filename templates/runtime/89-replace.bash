# lock.on_busy = "replace" (read past the cut: only such jobs). The run holding the lock
# notes its wrapper's pid and its command's process group in .NAME.lock.run while its
# command runs, and clears the note as it ends. A run that finds the lock busy stops that
# run: TERM to its wrapper, which stops its command and records the run as interrupted
# (a queue item goes back as an interrupted attempt: the signal path of 40-command.bash);
# it waits for the lock while the wrapper does so (its own TERM-then-KILL, sg_grace), and
# after that bound it KILLs what is left and waits once more. A holder that left no note
# (a job sharing the lock without replace, or one still starting) is not stopped: busy.

# sg_replace_note: the note, as the command starts (sg_run).
sg_replace_note() {
  printf '%s %s\n' "$$" "$sg_cmd_pid" 2>/dev/null >"$sg_lock_dir/.$sg_lock_name.lock.run"
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
  local w='' c='' bound=$((sg_grace / 10 + 5))
  IFS=' ' read -r w c 2>/dev/null <"$sg_lock_dir/.$sg_lock_name.lock.run" || return 1
  case $w$c in ''|*[!0-9]*) return 1 ;; esac
  [ "$w" != "$$" ] || return 1
  sg_js "$sg_lock_name"
  sg_event replace ",\"lock\":$sg_j,\"replaced_pid\":$w"
  printf 'schedgen: %s: lock %s is busy; stopping the run that holds it (pid %s)\n' "$sg_job" "$sg_lock_name" "$w" >&2
  # The one TERM-then-KILL (sg_term_kill), a tenth of a second at a time: the lock, not
  # the processes, is what is waited for (the holder's parent may not have reaped it).
  sg_tk=0
  if kill -0 "$w" 2>/dev/null; then sg_term_kill "$w" "$w" 1; else sg_term_kill "-$c" "-$c" 1; fi
  [ "$bound" -ge "${sg_lock_wait:-0}" ] || bound=$sg_lock_wait
  sg_lock "$1" "$bound" && return 0
  sg_tk=$sg_grace
  sg_term_kill "-$c" "-$c" $((sg_grace + 1))
  sg_term_kill "$w" "$w" $((sg_grace + 2))
  sg_lock "$1" 5
}
