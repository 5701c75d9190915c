# The job's lock (flock on fd 9) and the lock folder's checks.

# sg_lock FD WAIT: exclusive flock(2) on the open descriptor FD, waiting up to WAIT
# seconds (0: not at all). Returns 0 locked, 1 busy, else an error. flock(1) where it is
# installed (Linux), perl otherwise (always there on macOS). The lock belongs to the open
# file, so it stays held after the helper exits, for as long as any process of this run
# keeps FD open; the kernel drops it when the last one dies, kill -9 included. perl's
# flock constants are spelled as numbers (LOCK_EX 2, LOCK_NB 4: the same in macOS's,
# the BSDs' and Linux's sys/file.h): loading Fcntl for their names triples its cost.
sg_lock() {
  if command -v flock >/dev/null 2>&1; then
    if [ "$2" -gt 0 ]; then LC_ALL=C flock -w "$2" "$1"; else LC_ALL=C flock -n "$1"; fi
  else
    perl -e '
      my ($fd, $wait) = @ARGV;
      open(my $f, ">&=", $fd) or open($f, "<&=", $fd) or exit 2;
      if ($wait > 0) { $SIG{ALRM} = sub { exit 1 }; alarm $wait; flock($f, 2) or exit 1; exit 0 }
      flock($f, 6) or exit 1;
      exit 0' "$1" "$2"
  fi
}

# sg_lock_dir_ok: the lock dir is ours and nobody else can write it (else anyone could
# plant a symlink there, or hold our lock for ever). Made here (0700) when missing.
# Ownership is checked on every run. The mode needs a fork (find), so it is skipped while
# the folder is as it was when its mode was last found private (sg_lock_seen).
sg_lock_dir_ok() {
  sg_lock_quick=0
  if [ ! -d "$sg_lock_dir" ]; then
    mkdir -p "$sg_lock_dir" 2>/dev/null || sg_fail lock "cannot create the lock directory $sg_lock_dir"
    return 0
  fi
  if [ ! -O "$sg_lock_dir" ] || [ -L "$sg_lock_dir" ]; then
    sg_fail lock "lock directory $sg_lock_dir is not owned by this user; refusing it"
  fi
  # Names apart (a copy of the folder without its hard links) go the slow way, which joins them.
  if sg_lock_seen && [ "$sg_lock_file" -ef "$sg_lock_keep" ]; then sg_lock_quick=1; else sg_lock_mode; fi
}

# sg_lock_mode: refuse a lock dir that group or others can write, and a lock file with
# more names than its own two (a hard link made to another of our files), in one find.
sg_lock_mode() {
  local out
  out=$(find "$sg_lock_dir" "$sg_lock_file" -maxdepth 0 \( -type d \( -perm -0020 -o -perm -0002 \) \
    -o -type f -links +2 \) -print 2>/dev/null)
  case $out in
    '') ;;
    "$sg_lock_file") sg_fail lock "the lock file $sg_lock_file has more names than its own two; refusing it" ;;
    *) sg_fail lock "lock directory $sg_lock_dir can be written by others; remove it and let the next run make it again (chmod 700 alone keeps whatever others put in it)" ;;
  esac
}

# sg_lock_seen: nothing in the lock dir changed since its mode was last found private:
# after that check a run adds a byte (".") to the lock file it holds, so the lock file is
# newer than the folder until an entry of the folder changes (a name made, removed or
# swapped, a symlink planted: whoever does it, the folder's time becomes now), and holds
# nothing but those marks. Times the same to the clock's grain count as a change.
sg_lock_seen() {
  local c=''
  [ "$sg_lock_file" -nt "$sg_lock_dir" ] && [ ! -L "$sg_lock_file" ] || return 1
  IFS= read -r -n 4096 -d '' c 2>/dev/null <"$sg_lock_file"
  case $c in ''|*[!.]*) return 1 ;; esac
}

# sg_take_lock: the job's lock, on fd 9. The lock file has a second name (.NAME.lock.keep,
# a hard link) so that a lock whose file is deleted while held still holds: a run that
# finds the two names apart locks both files, one of which the holder still has. After
# locking, both names must still be the locked file (else it was replaced meanwhile:
# try again). Exits busy_exit when another run holds it. When the mode check was skipped
# the file is opened read-only (nothing is made through a name changed meanwhile) and
# the folder is looked at again once locked; after a mode check the lock gets its mark.
sg_take_lock() {
  local n=0 f
  while :; do
    n=$((n + 1))
    [ "$n" -le 5 ] || sg_fail lock "the lock file $sg_lock_file keeps changing under this run"
    if [ -L "$sg_lock_file" ] || [ -L "$sg_lock_keep" ]; then
      sg_fail lock "the lock file $sg_lock_file is a symlink; refusing it"
    fi
    # Only plain files of ours are opened (a FIFO would hang the open, another user's
    # file would let them hold the lock).
    for f in "$sg_lock_file" "$sg_lock_keep"; do
      [ ! -e "$f" ] || { [ -f "$f" ] && [ -O "$f" ]; } ||
        sg_fail lock "the lock file $f is not a plain file of this user; refusing it"
    done
    if [ "$sg_lock_quick" = 1 ]; then
      { exec 9<"$sg_lock_file"; } 2>/dev/null || { sg_lock_quick=0; sg_lock_mode; continue; }
    elif [ -e "$sg_lock_keep" ] && ! [ "$sg_lock_file" -ef "$sg_lock_keep" ]; then
      # The two names are apart: one of them was deleted or replaced while a run may hold
      # the other. Which one it holds cannot be told, so both are locked (the lock file on
      # fd 7 while it is there) before they are made one again.
      if [ -e "$sg_lock_file" ]; then
        { exec 7>>"$sg_lock_file"; } 2>/dev/null || sg_fail lock "cannot open $sg_lock_file"
        sg_lock_busy_or 7
      fi
      { exec 9>>"$sg_lock_keep"; } 2>/dev/null || sg_fail lock "cannot open $sg_lock_keep"
      sg_lock_busy_or 9
      rm -f "$sg_lock_file" && ln "$sg_lock_keep" "$sg_lock_file" 2>/dev/null
      exec 7>&- 9>&-
      continue
    else
      { exec 9>>"$sg_lock_file"; } 2>/dev/null || sg_fail lock "cannot open $sg_lock_file"
    fi
    [ -O "$sg_lock_file" ] || sg_fail lock "the lock file $sg_lock_file is not owned by this user; refusing it"
    [ -e "$sg_lock_keep" ] || ln "$sg_lock_file" "$sg_lock_keep" 2>/dev/null
    sg_lock_busy_or 9
    if [ "$sg_lock_file" -ef /dev/fd/9 ] && [ "$sg_lock_keep" -ef /dev/fd/9 ]; then
      if [ "$sg_lock_quick" = 1 ]; then
        sg_lock_seen && return 0
        sg_lock_mode      # the folder changed since the first look: its mode now
        exec 9>&-
        sg_lock_quick=0
        continue
      fi
      printf . >&9 2>/dev/null   # the mark: the folder was private up to now
      return 0
    fi
    exec 9>&-            # not the file the path names any more: lock that one instead
  done
}

# sg_lock_busy_or FD: lock FD (waiting lock_wait), or exit busy_exit / 78; with
# on_busy = "replace", stop the run that holds it first (89-replace.bash).
sg_lock_busy_or() {
  sg_lock "$1" "$sg_lock_wait"
  case $? in
    0) ;;
    1)
      [ "${sg_on_busy:-}" != replace ] || ! sg_replace "$1" || return 0
      printf 'schedgen: %s: lock %s is busy (another run holds it); exit %s\n' "$sg_job" "$sg_lock_name" "$sg_busy_exit" >&2
      sg_js "$sg_lock_name"
      sg_event busy ",\"lock\":$sg_j"
      [ -z "$sg_metrics_file" ] || sg_metrics_busy
      exit "$sg_busy_exit" ;;
    *) sg_fail lock "cannot lock $sg_lock_file" ;;
  esac
}
