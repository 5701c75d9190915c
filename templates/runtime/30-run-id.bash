# Run IDs and run directories.

# sg_builtins: bash's own mkdir (its loadable builtin, Debian's and Ubuntu's bash-builtins
# package) for the wrapper's own run and claim directories (sg_mkdir), a fork less for
# each. Only the system's bash with the system's builtins (dpkg ties bash-builtins to the
# exact bash: a .so of another build would fail only at its first call), and only while
# the first mkdir on the job's PATH, as the command will see it, is the system's. Loaded
# turned off: the job's own code (a queue item's command, notify, the env file) never
# meets it, and every mkdir -p is /bin/mkdir's (the loadable one gives up when a folder on
# the way appears meanwhile). Elsewhere (macOS's bash 3.2) mkdir forks as before.
sg_builtins() {
  case $BASH in /bin/bash|/usr/bin/bash) ;; *) return 0 ;; esac
  [ -f /usr/lib/bash/mkdir ] && sg_sys_tool mkdir || return 0
  enable -f /usr/lib/bash/mkdir mkdir 2>/dev/null || return 0
  enable -n mkdir
  sg_lb=1
}

# sg_sys_tool NAME: the first NAME on PATH (an empty entry is the working directory) is
# /bin's or /usr/bin's.
sg_sys_tool() {
  local x='' IFS=:
  set -f
  for x in $PATH; do [ ! -x "${x:-.}/$1" ] || break; done
  set +f
  case $x in /bin|/usr/bin) [ -x "$x/$1" ] ;; *) return 1 ;; esac
}

# sg_mkdir DIR...: the wrapper's own mkdir of new directories (no -p): bash's where loaded,
# turned on for this call only; /bin/mkdir, without loading a locale, otherwise.
sg_mkdir() {
  if [ "$sg_lb" = 1 ]; then
    enable mkdir
    mkdir "$@"
    set -- "$?"
    enable -n mkdir
    return "$1"
  fi
  LC_ALL=C mkdir "$@"
}

# sg_id_floor_set: the newest run directory's time. A clock that stepped back must not
# give a new run a name that sorts before older runs (pruning keeps the newest names):
# a run whose time is before it is named in or after its second (sg_new_id), while its
# started_at keeps the clock's own time. Also sg_nruns, the number of run directories.
# A plain run under the job's lock reads both from .last-run, which the previous one
# wrote as it ended (sg_last_run_note): it holds while nothing in runs/ changed since
# (the file is newer than the folder; any directory made or removed, by anyone, makes
# the folder newer; times the same to the clock's grain count as a change). File times
# come from the same clock: one that stepped back since the note (now before the time
# it holds) could date a later change before it, so then the note is struck out (until
# a run ends normally) and the folder is listed, as it is otherwise.
sg_id_floor_set() {
  local last='' n='' at='' ok=0
  if [ -n "$sg_lock_name" ] && [ -z "$sg_inbox" ] && [ -f "$sg_last_run" ] && [ ! -L "$sg_last_run" ]; then
    # Its one line of 64 bytes, no more: a file that someone filled costs no more to read
    # (-n alone would not do: a read to a newline skips NULs and does not count them).
    IFS= read -r -n 64 -d '' at 2>/dev/null <"$sg_last_run"
    at="${at%%"$sg_nl"*} "      # a space after each field: each step takes one
    last=${at%% *} at=${at#* }
    n=${at%% *} at=${at#* }
    at=${at%% *}
    # shellcheck disable=SC2254  # a pattern, matched on purpose
    case $last in $sg_id_pat) ok=1 ;; esac
    case $n in ''|0?*|*[!0-9]*) ok=0 ;; esac
    case $at in ''|0*|*[!0-9]*) ok=0 ;; esac
    if [ "$ok" = 1 ]; then
      if [ "$sg_epoch" -lt "$at" ]; then
        printf '%-63s\n' - 2>/dev/null 1<>"$sg_last_run"
      elif [ "$sg_last_run" -nt "$sg_runs" ]; then
        sg_id_floor=${last%%-*} sg_id_last=$last sg_nruns=$n
        return 0
      fi
    fi
  fi
  local LC_ALL=C       # byte order (here, not above: setting it costs a setlocale)
  set -- "$sg_runs"/*
  if sg_runs_none "$@"; then sg_nruns=0; return 0; fi
  sg_nruns=$#
  # The newest run ID: the last name that is one (a README or a "latest" link someone put
  # here sorts after the IDs; taken for the newest, it would leave no floor).
  n=$#
  while [ "$n" -gt 0 ]; do
    eval "last=\${$n}"
    last=${last##*/}
    # shellcheck disable=SC2254  # a pattern, matched on purpose
    case $last in
      $sg_id_pat) sg_id_floor=${last%%-*} sg_id_last=$last
        return 0 ;;
    esac
    n=$((n - 1))
  done
}

# sg_new_id: a new run ID: UTC time (see the floor above) + pid (7 digits, zero-padded, so
# that names of one second sort as their pids do), then -0002, -0003... for further runs
# of this process within the same second (never reused, even once pruned), and past any
# taken. Every run goes after the newest name it knows of (sg_id_last: the folder's, then
# its own last): in its own second when that sorts after it, else in the second after the
# newest one (a clock behind it, a pid that wrapped round, an older runtime's unpadded
# pid), so that pruning, which keeps the newest names, never takes a later run for an
# older one; and only then, so that such steps do not add up run after run. Runs that
# start side by side without seeing each other's names (no lock) have no order. Queue
# workers run side by side by design: theirs sort by pid within a second (a second
# later for each worker would add up), and a clock behind the newest name gives the
# second after it.
sg_new_id() {
  local stamp=$sg_stamp
  if [ -n "$sg_inbox" ]; then
    if [[ "$stamp" < "$sg_id_floor" ]]; then
      if [ -z "$sg_id_bump" ]; then
        sg_epoch_of "$sg_id_floor"
        sg_stamp_of $((sg_e + 1))
        sg_id_bump=$sg_s
      fi
      stamp=$sg_id_bump
    fi
    sg_id_in "$stamp"
    return 0
  fi
  [[ "$stamp" > "$sg_id_floor" ]] || stamp=$sg_id_floor
  sg_id_in "$stamp"
  if [ "$stamp" = "$sg_id_floor" ] && ! sg_id_after "$sg_run_id" "$sg_id_last"; then
    sg_epoch_of "$sg_id_floor"
    sg_stamp_of $((sg_e + 1))
    sg_id_in "$sg_s"
  fi
  sg_id_floor=${sg_run_id%%-*} sg_id_last=$sg_run_id
}

# sg_id_in STAMP: sg_run_id in that second: STAMP-pid (padded), then -0002... past any name taken.
sg_id_in() {
  if [ "$1" = "$sg_id_stamp" ]; then
    sg_id_n=$((sg_id_n + 1))
  else
    sg_id_stamp=$1
    sg_id_n=1
  fi
  sg_run_id=$1-$sg_idpid
  [ "$sg_id_n" -eq 1 ] || printf -v sg_run_id '%s-%s-%04d' "$1" "$sg_idpid" "$sg_id_n"
  while [ -e "$sg_runs/$sg_run_id" ] || { [ -n "$sg_inbox" ] && [ -e "$sg_processing/$sg_run_id" ]; }; do
    sg_id_n=$((sg_id_n + 1))
    printf -v sg_run_id '%s-%s-%04d' "$1" "$sg_idpid" "$sg_id_n"
  done
}

# sg_id_after A B: A sorts after B, byte by byte (bash 5 compares in the locale's order).
sg_id_after() {
  local LC_ALL=C
  [[ "$1" > "$2" ]]
}

# sg_run_dir_one: the run's ID and directory (sg_run_id, sg_run_dir), for a run starting
# now; a queue's runs make theirs ahead, several with one mkdir (sg_run_dir_new).
sg_run_dir_one() {
  [ -d "$sg_runs" ] || mkdir -p "$sg_runs" 2>/dev/null
  sg_new_id
  sg_run_dir_make
  sg_last_id=$sg_run_id
  [ -z "$sg_nruns" ] || sg_nruns=$((sg_nruns + 1))
}

# sg_runs_none "$sg_runs"/*: the listing found nothing: the pattern itself came back (a
# name another run removed meanwhile, or a dangling symlink, is not "nothing").
sg_runs_none() {
  [ "$#" -eq 1 ] && [ "$1" = "$sg_runs/*" ] && [ ! -e "$1" ] && [ ! -L "$1" ]
}

# sg_run_dir_make: make the directory of sg_run_id, with a new ID while the name is taken.
# A mkdir killed by a signal to the whole process group may have made the directory: the
# name was free (sg_new_id), so it is ours; if it did not, it is tried again.
sg_run_dir_make() {
  local n=0 st
  while :; do
    sg_mkdir "$sg_runs/$sg_run_id" 2>/dev/null
    st=$?
    [ "$st" -ne 0 ] || break
    n=$((n + 1))
    if [ "$st" -gt 128 ]; then
      [ ! -d "$sg_runs/$sg_run_id" ] || break
    elif [ ! -e "$sg_runs/$sg_run_id" ]; then
      n=100
    else
      sg_new_id
    fi
    [ "$n" -lt 100 ] || sg_fail log_dir "cannot create a run directory in $sg_runs"
  done
  sg_run_dir=$sg_runs/$sg_run_id
}

# sg_last_run_note: as a plain run under the job's lock ends (after pruning), its ID, the
# count of run directories and the time go to .last-run for the next run
# (sg_id_floor_set): one fixed-width line written over in place. Runs without the lock
# may overlap: they list the folder.
sg_last_run_note() {
  [ -n "$sg_lock_name" ] && [ -n "$sg_nruns" ] && [ -n "$sg_last_id" ] || return 0
  [ -z "$sg_inbox" ] || return 0
  # A FIFO would hang us; a symlink would be written through.
  [ ! -L "$sg_last_run" ] && { [ ! -e "$sg_last_run" ] || [ -f "$sg_last_run" ]; } || return 0
  printf '%-63s\n' "$sg_last_id $sg_nruns $sg_epoch" 2>/dev/null 1<>"$sg_last_run"
}
