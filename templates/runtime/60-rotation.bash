# Rotation of the appended-to logs, pruning of run directories.

# sg_rotate_file FILE: FILE.1 (newest) ... FILE.<keep>; older copies are dropped.
sg_rotate_file() {
  local i=$((sg_keep - 1))
  if [ "$sg_keep" -eq 0 ]; then
    : >"$1"
    return 0
  fi
  while [ "$i" -ge 1 ]; do
    [ ! -e "$1.$i" ] || mv -f "$1.$i" "$1.$((i + 1))"
    i=$((i - 1))
  done
  mv -f "$1" "$1.1"
}

# sg_big: the job's appended-to logs that reached max_size.
sg_big() {
  find "$sg_log_dir" -maxdepth 1 -type f \( -name events.jsonl -o -name cron.log \
    -o -name launchd.out.log -o -name launchd.err.log \) -size +$((sg_max_size - 1))c 2>/dev/null
}

# sg_rotate: launchd and cron never rotate what they append to, so we do, under a
# rotation lock (runs without the job lock may overlap). Sizes are looked at (one
# `find`) once every sg_rotate_every runs: a run adds well under a KB to these files,
# so they pass max_size by far less than that in between. The count has a fixed width
# and is written over in place: a truncated file gives its block back and takes a new
# one, several times the cost of the write.
sg_rotate() {
  local big f n=0 nl='
'
  # Only a plain file is read or written (a FIFO would hang the run with its lock held, a
  # symlink would be written through): anything else there is replaced by a count. A
  # count with a leading 0 is none (bash would read 08 as a bad octal number).
  if [ "$sg_rotate_every" -gt 1 ]; then
    f=$sg_log_dir/.rotate-count
    if [ -L "$f" ] || { [ -e "$f" ] && [ ! -f "$f" ]; }; then rm -rf "$f" 2>/dev/null; fi
    [ ! -r "$f" ] || read -r -n 16 -d '' n 2>/dev/null <"$f"   # -d '': NULs end it too
    case $n in ''|0?*|*[!0-9]*) n=0 ;; esac
    [ -L "$f" ] || printf '%3d\n' $(((n + 1) % sg_rotate_every)) 2>/dev/null 1<>"$f"
    [ "$n" -eq 0 ] || return 0
  fi
  big=$(sg_big)
  [ -n "$big" ] || return 0
  # The rotation lock lies beside the logs it guards, in the job's own log folder (the lock
  # folder of a job without a lock is never checked); only a plain file is opened.
  f=$sg_log_dir/.rotate.lock
  [ ! -L "$f" ] && { [ -f "$f" ] || [ ! -e "$f" ]; } || return 0
  { exec 7>>"$f"; } 2>/dev/null || return 0
  if sg_lock 7 0 2>/dev/null; then
    big=$(sg_big)
    for f in events.jsonl cron.log launchd.out.log launchd.err.log; do
      case "$nl$big$nl" in *"/$f$nl"*) sg_rotate_file "$sg_log_dir/$f" ;; esac
    done
  fi
  exec 7>&-
}

# sg_alive DIR: the run owning DIR may still be going: its manifest says running and
# (when it ran on this host) its pid is alive. A manifest that is missing or incomplete
# (made ahead, just made, being written, or cut short by a full disk) is judged by the
# pid its name holds (<time>-<pid>[-n]).
sg_alive() {
  local text='' pid host
  if [ -f "$1/schedgen-manifest.json" ] && [ ! -L "$1/schedgen-manifest.json" ]; then
    # The whole file in one read (quietly: another run may be removing it right now), up
    # to 64 KB: ours is a line of at most a few, a command's own could be any size.
    IFS= read -r -n 65536 -d '' text 2>/dev/null <"$1/schedgen-manifest.json"
  fi
  case $text in
    *'"outcome": "running",'*'"smoke": '*'}'*)
      pid=${text#*'"pid": '}
      pid=${pid%%,*}
      host=${text#*'"host": '}
      host=${host%%', "pid": '*}
      [ "$host" = "$sg_host_j" ] || return 0 ;;
    *'"outcome": "'[a-z]*'",'*'"smoke": '*'}'*) return 1 ;;
    *)
      pid=${1##*/}
      pid=${pid#*Z-}
      pid=${pid%%-*}
      pid=${pid#"${pid%%[!0]*}"} ;;   # its zeros of padding
  esac
  case $pid in ''|*[!0-9]*) return 0 ;; esac
  [ "$pid" != "$$" ] || return 0
  kill -0 "$pid" 2>/dev/null
}

# sg_prune: keep the newest keep_runs run directories (names sort by time), and remove
# empty ones (made ahead by a run that was killed) wherever they are. Done in batches,
# once there are more than keep_runs + keep_runs/8, so that a job at its limit does not
# look at every directory and fork an rm on every run. A plain run that holds the job's
# lock (so no other run of the job made one since) goes by its count (sg_nruns, its own
# included): the folder is not listed at all while under the limit.
sg_prune() {
  if [ -z "$sg_inbox" ] && [ -n "$sg_lock_name" ] && [ -n "$sg_nruns" ] &&
    [ "$sg_nruns" -le $((sg_keep_runs + sg_keep_runs / 8)) ]; then
    return 0
  fi
  local LC_ALL=C d n old k=0 ids
  set -- "$sg_runs"/*      # no trailing slash: it would sort "id/" after "id-0002/"
  if sg_runs_none "$@"; then sg_nruns=0; return 0; fi
  # Only names of runs: what else someone put here is neither counted nor removed.
  ids=()
  for d; do
    # shellcheck disable=SC2254  # a pattern, matched on purpose
    case ${d##*/} in $sg_id_pat) ids[${#ids[@]}]=$d ;; esac
  done
  set -- ${ids[@]+"${ids[@]}"}
  sg_nruns=$#
  [ "$#" -gt $((sg_keep_runs + sg_keep_runs / 8)) ] || return 0
  old=()
  n=$(($# - sg_keep_runs))
  sg_nruns=0
  for d in "$@"; do
    [ -d "$d" ] || { n=$((n - 1)); continue; }
    sg_nruns=$((sg_nruns + 1))
    # Without a manifest: made ahead, or killed as it began (manifest.json: one from
    # before the manifest had its own name, or the command's, kept like a manifest).
    if [ "$n" -gt 0 ] || { [ ! -e "$d/schedgen-manifest.json" ] && [ ! -e "$d/manifest.json" ]; }; then
      sg_alive "$d" || { old[k]=$d; k=$((k + 1)); }
    fi
    n=$((n - 1))
  done
  sg_nruns=$((sg_nruns - k))
  # One rm for all of them; quietly: a finished run of another worker may write its
  # manifest again (once its item has moved) as its directory goes, and rm then finds it
  # not empty. What is left goes next time. /bin/rm, not bash's loadable one, which follows
  # a symlink when unlink fails with EPERM (procfs, append-only folders).
  [ "$k" -eq 0 ] || rm -rf ${old[@]+"${old[@]}"} 2>/dev/null
}
