
# sg_id_floor_set: the newest run directory's time. A clock that stepped back must not
# give a new run a name that sorts before older runs (pruning keeps the newest names):
# a run whose time is before it is named a second after it (sg_id_bump), while its
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

# sg_new_id: a new run ID: UTC time (see the floor above) + pid, then -0002, -0003... for
# further runs of this process within the same second (never reused, even once pruned),
# and past any taken. The suffix has a fixed width so that IDs sort by time as strings.
# Names of one second sort by pid, as text. A plain run under its lock goes after the
# newest name (sg_id_last): in its second when its clock is behind it, and one second
# later only when its own name would not sort after it, so that such steps do not add
# up run after run. Queue workers and runs without the lock run side by side (their
# order within a second is the pids'); their clock behind the newest name gives the
# second after it.
sg_new_id() {
  local stamp=$sg_stamp locked=0
  [ -n "$sg_inbox" ] || [ -z "$sg_lock_name" ] || locked=1
  if [[ "$stamp" < "$sg_id_floor" ]]; then
    if [ "$locked" = 1 ]; then
      stamp=$sg_id_floor
    else
      if [ -z "$sg_id_bump" ]; then
        sg_epoch_of "$sg_id_floor"
        sg_stamp_of $((sg_e + 1))
        sg_id_bump=$sg_s
      fi
      stamp=$sg_id_bump
    fi
  fi
  sg_id_in "$stamp"
  if [ "$locked" = 1 ] && [ "$stamp" = "$sg_id_floor" ] && ! sg_id_after "$sg_run_id" "$sg_id_last"; then
    sg_epoch_of "$sg_id_floor"
    sg_stamp_of $((sg_e + 1))
    sg_id_in "$sg_s"
  fi
}

# sg_id_in STAMP: sg_run_id in that second: STAMP-pid, then -0002... past any name taken.
sg_id_in() {
  if [ "$1" = "$sg_id_stamp" ]; then
    sg_id_n=$((sg_id_n + 1))
  else
    sg_id_stamp=$1
    sg_id_n=1
  fi
  sg_run_id=$1-$$
  [ "$sg_id_n" -eq 1 ] || printf -v sg_run_id '%s-%s-%04d' "$1" "$$" "$sg_id_n"
  while [ -e "$sg_runs/$sg_run_id" ] || { [ -n "$sg_inbox" ] && [ -e "$sg_processing/$sg_run_id" ]; }; do
    sg_id_n=$((sg_id_n + 1))
    printf -v sg_run_id '%s-%s-%04d' "$1" "$$" "$sg_id_n"
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

# sg_manifest: (re)write the run's manifest.json (one line, one write). A rewrite goes
# over the old text in place (<>, no truncation: a truncated file gives its block back
# and takes a new one, several times the cost of the write on ext4 and APFS), padded
# with spaces (JSON whitespace) to the old length, when that is sure to cover it: the
# file still holds exactly what we wrote, and both texts are plain ASCII (so characters
# are bytes in any locale). Otherwise (a name with other characters, a command that
# wrote its own manifest.json there) it is written afresh. Only the job, host, item and
# path can bring other characters in (the rest is ours: digits, times, words).
sg_manifest() {
  local item=null path=null attempt=null fin=null dur=null code=null line cur='' n
  local plain=$sg_plain
  if [ -n "$sg_item_name" ]; then
    sg_js "$sg_item_name"; item=$sg_j
    sg_js "$sg_item_path"; path=$sg_j
    attempt=${sg_attempt:-null}
    case $item$path in *[!abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789' {}":,./_~+=@-']*) plain=0 ;; esac
  fi
  if [ "$sg_outcome" != running ]; then
    fin="\"$sg_iso\""
    dur=$((sg_epoch - sg_start_epoch))
    code=${sg_status:-null}
  fi
  printf -v line '{"format": 1, "job": %s, "run_id": "%s", "host": %s, "pid": %s, "started_at": "%s", "finished_at": %s, "duration": %s, "exit_code": %s, "outcome": "%s", "item": %s, "attempt": %s, "item_path": %s, "smoke": %s}' \
    "$sg_job_j" "$sg_run_id" "$sg_host_j" "$$" "$sg_started_at" "$fin" "$dur" "$code" \
    "$sg_outcome" "$item" "$attempt" "$path" "$sg_smoke_j"
  [ "$plain" = 1 ] || sg_mtext=''
  # The command may have put something else there (its directory is its own): a FIFO
  # would hang the run with its lock held, a symlink would be written through.
  if [ -L "$sg_run_dir/manifest.json" ] ||
    { [ -e "$sg_run_dir/manifest.json" ] && [ ! -f "$sg_run_dir/manifest.json" ]; }; then
    rm -rf "$sg_run_dir/manifest.json" 2>/dev/null
    sg_mtext=''
  fi
  if [ -n "$sg_mtext" ]; then
    # At most one character more than ours: a command's huge manifest.json is not read in.
    # Only the end of the file ends the read as ours does: one that stops early met a NUL
    # (our text, then a NUL and more: written over, the rest would stay behind).
    if IFS= read -r -n $((${#sg_mtext} + 2)) -d '' cur 2>/dev/null <"$sg_run_dir/manifest.json"; then
      cur=''
    fi
    [ "$cur" = "$sg_mtext$sg_nl" ] || sg_mtext=''
  fi
  # One line: bash writes its output a line at a time, so this is one write(2).
  if [ -n "$sg_mtext" ]; then
    n=$((${#sg_mtext} - ${#line}))
    while [ "$n" -gt 0 ]; do
      line=$line${sg_pad:0:$n}
      n=$((${#sg_mtext} - ${#line}))
    done
    printf '%s\n' "$line" 2>/dev/null 1<>"$sg_run_dir/manifest.json" || sg_lost
  else
    printf '%s\n' "$line" 2>/dev/null >"$sg_run_dir/manifest.json" || sg_lost
  fi
  sg_mtext=$line
  [ "$plain" = 1 ] || sg_mtext=''
}
