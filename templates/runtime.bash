# schedgen runtime -- schedgen-managed: generated file, do not edit; `schedgen apply` replaces it.
# shellcheck shell=bash disable=SC2154,SC2034  # settings come from the job file, which reads sg_exec
#
# The shared part of every schedgen job: each job file beside it (<job>.sh) sets the
# job's settings as sg_* variables, defines sg_env / sg_command / sg_smoke_command,
# sources this file and calls sg_main. DESIGN.md §5 is the contract, docs/wrapper.md
# the user guide. Plain bash 3.2 with BSD tools (macOS) and bash 5 with GNU tools: no
# bash-4 syntax, no GNU-only options, nothing macOS lacks (flock, timeout, setsid).
# Nothing runs at source time but definitions, so a job file can source it (bash reads
# a sourced file whole: replacing it while runs are going on is safe).
# Hot path: no cat/basename/dirname/wc/date per item (forks are the cost that counts):
# a queue item costs its command's fork and its keeper's; claims, run dirs and done
# moves are batched. The wrapper's own flock, mkdir, mv and rm on that path run with
# LC_ALL=C: under a UTF-8 LANG (a systemd user session has one) each would first load
# the locale's files (0.2-0.3 ms an exec). The command keeps the locale it is given.
#
# Notify and pings: notify.sh (a file of its own, sourced by job files with notify
# settings) is called through sg_hook; a time-zone gate goes before the lock in sg_main.
# fscheck.sh is appended to this file by schedgen (after the queue part).

sg_runtime_api=1     # the job files' interface; they refuse a runtime of another one
sg_chunk_max=32      # queue items claimed with one mv
sg_pad='                                                                '   # 64 spaces
sg_nl='
'
sg_ahead_max=32      # run directories made with one mkdir

# sg_init: every global the runtime uses, so that no path out (signals included) meets
# an unset one under set -u.
sg_init() {
  sg_runs=$sg_log_dir/runs
  sg_last_run=$sg_log_dir/.last-run
  sg_events=$sg_log_dir/events.jsonl
  sg_host=${HOSTNAME:-localhost}
  sg_smoke=${SCHEDGEN_SMOKE:-}
  sg_smoke_j=false
  [ "$sg_smoke" != 1 ] || sg_smoke_j=true
  sg_fg=${SCHEDGEN_FOREGROUND:-}
  sg_record=1          # 0 while a smoke run checks its preconditions: it writes nothing
  sg_run_dir=''        # the current run's directory, once made
  sg_run_id=''
  sg_outcome=''        # running, then ok / failed / timeout / interrupted
  sg_status=''         # the command's exit status
  sg_cmd_pid=''        # the command's keeper (its process group) while it runs
  sg_wd_pid=''         # the timeout watchdog
  # Tenths of a second from TERM to KILL: 5 s (a test may shorten it with
  # SCHEDGEN_TEST_KILL_GRACE=<seconds>).
  sg_grace=${SCHEDGEN_TEST_KILL_GRACE:-5}
  case $sg_grace in ''|0?*|*[!0-9]*) sg_grace=5 ;; esac
  sg_grace=$((sg_grace * 10))
  sg_signal='' sg_signum=0   # the first INT, TERM or HUP that stopped this run
  sg_crit=0            # 1 inside a critical section: a signal is acted on at its end
  sg_tidy=0            # 1 once this run may rotate logs and prune run directories
  sg_started_at='' sg_start_epoch=0
  sg_item='' sg_item_name='' sg_item_path='' sg_item_to='' sg_attempt=''
  sg_started=0         # 1 once the command for the current item has been started
  [ -z "$sg_inbox" ] || sg_init_queue   # the queue's own (in its part, read by queue jobs)
  sg_base='' sg_epoch='' sg_stamp='' sg_iso='' sg_s='' sg_e=0 sg_id_stamp='' sg_id_n=0 sg_id_floor=''
  sg_id_last=''         # the newest run directory's name (sg_id_floor_set)
  sg_j='' sg_id_bump='' sg_exec=''
  sg_lb=''             # 1: bash's loadable mkdir is loaded, turned off (sg_builtins)
  sg_lock_file=$sg_lock_dir/$sg_lock_name.lock   # used only when sg_lock_name is set
  sg_lock_keep=$sg_lock_dir/.$sg_lock_name.lock.keep
  sg_nruns=''          # run directories (sg_id_floor_set), this run's included once made
  sg_last_id=''        # this plain run's ID, once its directory is made
  sg_lock_quick=0      # 1: the lock dir's mode check was skipped (sg_lock_seen)
  sg_fault=0 sg_nsig=0 sg_rlost=0   # sg_rlost: a record could not be written (sg_lost)
  sg_id_pat='[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9]Z-[0-9]*'  # a run ID
  sg_mtext=''          # the run's manifest as last written, if plain ASCII (sg_manifest)
  sg_wrapper_pid=$$
  # Notify (notify.sh): on when the job file set notify settings and this is no smoke run.
  sg_nfy=0 sg_nfy_started=0 sg_nfy_dir=''
  [ -z "${sg_notify_on-}${sg_ping_url-}" ] || [ "$sg_smoke" = 1 ] || sg_nfy=1
  sg_shell=$BASH_SUBSHELL   # the wrapper's own level; its subshells have higher ones
  sg_js "$sg_host"
  sg_host_j=$sg_j
  sg_js "$sg_job"
  sg_job_j=$sg_j
  sg_plain=1           # the job and host JSON are plain ASCII (sg_manifest)
  case $sg_job_j$sg_host_j in *[!abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789' {}":,./_~+=@-']*) sg_plain=0 ;; esac
  SCHEDGEN_JOB=$sg_job
  SCHEDGEN_ITEM=
  export SCHEDGEN_JOB SCHEDGEN_ITEM
}

# --- helpers -----------------------------------------------------------------

# sg_now: the time as sg_epoch, sg_stamp (run ID part, %Y%m%dT%H%M%SZ) and sg_iso (UTC
# ISO 8601). bash 5 has EPOCHSECONDS; bash 3.2 runs `date` once per process, and later
# calls add bash's SECONDS (whole seconds of the same clock) to that base, fork-free.
sg_now() {
  local t s0
  t=${EPOCHSECONDS:-}   # unset in bash 3.2 (the guarded form is the only use)
  if [ -z "$t" ]; then
    while [ -z "$sg_base" ]; do
      s0=$SECONDS
      t=$(date -u '+%s')
      # A second that ticked during the `date` call would make the base off by one: retry.
      [ "$s0" != "$SECONDS" ] || sg_base=$((t - SECONDS))
    done
    t=$((sg_base + SECONDS))
  fi
  [ "$t" != "$sg_epoch" ] || return 0   # same second: nothing to do
  sg_epoch=$t
  sg_stamp_of "$t"
  sg_stamp=$sg_s
  sg_iso=${sg_stamp:0:4}-${sg_stamp:4:2}-${sg_stamp:6:5}:${sg_stamp:11:2}:${sg_stamp:13:3}
}

# sg_stamp_of EPOCH: sets sg_s to EPOCH as %Y%m%dT%H%M%SZ (UTC). Days since 1970-01-01 to
# a civil date (H. Hinnant's algorithm), in bash arithmetic.
sg_stamp_of() {
  local t z era doe yoe doy mp y m d
  z=$(($1 / 86400 + 719468))
  era=$((z / 146097))
  doe=$((z - era * 146097))
  yoe=$(((doe - doe / 1460 + doe / 36524 - doe / 146096) / 365))
  doy=$((doe - (365 * yoe + yoe / 4 - yoe / 100)))
  mp=$(((5 * doy + 2) / 153))
  d=$((doy - (153 * mp + 2) / 5 + 1))
  m=$((mp < 10 ? mp + 3 : mp - 9))
  y=$((yoe + era * 400 + (m <= 2)))
  t=$(($1 % 86400))
  printf -v sg_s '%04d%02d%02dT%02d%02d%02dZ' "$y" "$m" "$d" $((t / 3600)) $((t / 60 % 60)) $((t % 60))
}

# sg_epoch_of STAMP: sets sg_e to the epoch of a %Y%m%dT%H%M%SZ stamp (the inverse).
sg_epoch_of() {
  local y=$((10#${1:0:4})) m=$((10#${1:4:2})) d=$((10#${1:6:2})) era yoe doy doe
  y=$((y - (m <= 2)))
  era=$(((y >= 0 ? y : y - 399) / 400))
  yoe=$((y - era * 400))
  doy=$(((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1))
  doe=$((yoe * 365 + yoe / 4 - yoe / 100 + doy))
  sg_e=$(((era * 146097 + doe - 719468) * 86400 + 10#${1:9:2} * 3600 + 10#${1:11:2} * 60 + 10#${1:13:2}))
}

# sg_js VALUE: sets sg_j to VALUE as a JSON string (quotes, backslashes and control
# characters escaped, no fork; the loop only runs for values that need it).
sg_js() {
  local s=$1 out='' c
  case $s in
    *[\"\\[:cntrl:]]*) ;;
    *) sg_j="\"$s\""; return 0 ;;
  esac
  while [ -n "$s" ]; do
    c=${s:0:1}
    s=${s:1}
    case $c in
      \") out="$out\\\"" ;;
      \\) out="$out\\\\" ;;
      [[:cntrl:]]) printf -v c '\\u%04x' "'$c"; out=$out$c ;;
      *) out=$out$c ;;
    esac
  done
  sg_j="\"$out\""
}

# events.jsonl: one JSON object per line, appended with one write (O_APPEND), e.g.
#   {"ts":"2025-01-31T06:15:00Z","event":"finish","job":"x","run_id":"20250131T061500Z-4242",
#    "pid":4242,"host":"mac","exit_code":0,"outcome":"ok","duration":3,"item":"a.json","attempt":1}
# Every line has ts (UTC), event, job, run_id, pid, host; then, by event:
#   start        item, attempt, smoke          the command is starting (run dir made)
#   finish       exit_code, outcome (ok|failed|timeout|interrupted), duration, item, attempt,
#                item_to (processed|inbox|failed|gone|processing)
#   busy         lock                          the lock was held by another run: exit busy_exit
#   empty                                      nothing left to claim in the inbox: exit 0
#   claim        item, attempt                 a claimed item's run begins (its run dir is made)
#   recover      item, claim, attempt, item_to, state
#                                              a dead worker's item was moved on: state done
#                                              (to processed), started (a failed attempt),
#                                              claimed (back to the inbox, not counted) or
#                                              foreign (a file its command left beside it:
#                                              to failed)
#   timeout      after                         the command ran past the timeout: killed, exit 124
#   signal       signal                        the wrapper got INT/TERM/HUP and passed it on
#   precondition what, message, exit_code      env file/working dir/command/log dir/lock: exit 78
#   error        message                       the wrapper could not do its own work
# A done queue item's finish line is written once it is in processed/ (sg_flush), so a
# finish line never names a move that did not happen.
# sg_event NAME [FIELDS]: FIELDS is JSON text starting with a comma.
sg_event() {
  [ "$sg_record" = 1 ] || return 0
  printf '{"ts":"%s","event":"%s","job":%s,"run_id":"%s","pid":%s,"host":%s%s}\n' \
    "$sg_iso" "$1" "$sg_job_j" "$sg_run_id" "$$" "$sg_host_j" "${2-}" 2>/dev/null >>"$sg_events" ||
    sg_lost
}

# sg_lost: a record (event, manifest) could not be written, or not whole (a full disk):
# the run says so once on stderr and exits 74 when its command did well (sg_on_exit), so
# that a run without its records is not taken for a good one.
sg_lost() {
  sg_fault=1
  [ "$sg_rlost" = 0 ] || return 0
  sg_rlost=1
  printf 'schedgen: %s: could not write the run records in %s (disk full?)\n' "$sg_job" "$sg_log_dir" >&2
}

# sg_fail WHAT MESSAGE: a precondition failed: say so, record it, exit 78.
sg_fail() {
  printf 'schedgen: %s: %s\n' "$sg_job" "$2" >&2
  sg_rlost=1           # its own event may not get written either (no log folder): said
  sg_js "$2"
  sg_event precondition ",\"what\":\"$1\",\"message\":$sg_j,\"exit_code\":78"
  [ "${sg_nfy:-0}" != 1 ] || sg_notify_finish 78 precondition "$sg_log_dir"
  exit 78
}

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

# sg_lock_busy_or FD: lock FD (waiting lock_wait), or exit busy_exit / 78.
sg_lock_busy_or() {
  sg_lock "$1" "$sg_lock_wait"
  case $? in
    0) ;;
    1)
      printf 'schedgen: %s: lock %s is busy (another run holds it); exit %s\n' "$sg_job" "$sg_lock_name" "$sg_busy_exit" >&2
      sg_js "$sg_lock_name"
      sg_event busy ",\"lock\":$sg_j"
      exit "$sg_busy_exit" ;;
    *) sg_fail lock "cannot lock $sg_lock_file" ;;
  esac
}

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

# sg_hook start|finish: notify.sh's calls. A plain run has one start and one finish; a
# queue job sends one pair per wrapper call (its first item's start; the finish from
# sg_on_exit with the wrapper's exit status), so a batch is not a ping per item.
sg_hook() {
  [ "$sg_nfy" = 1 ] || return 0
  case $1 in
    start)
      sg_nfy_dir=$sg_run_dir
      [ "$sg_nfy_started" = 0 ] || return 0
      sg_nfy_started=1
      sg_notify_start "$sg_run_dir" ;;
    finish)
      sg_nfy_started=2
      sg_notify_finish "$sg_status" "$sg_outcome" "$sg_log_dir" "$sg_nfy_dir" ;;
  esac
}

# --- running the command -----------------------------------------------------------

# sg_keeper: the background process that runs the command (its process group's leader,
# set -m). For a queue item it waits for the command and journals how it ended, so that
# a command that finished is not run again if the wrapper alone is killed afterwards;
# it holds the run's lock descriptors as long as it lives. Signals do not stop it (a
# handler, not SIG_IGN, so the command keeps the default ones): it outlives its command.
sg_keeper() {
  local st
  trap - EXIT
  [ "$sg_lb" != 1 ] || enable -n mkdir   # off already (sg_mkdir runs in the critical section): defensive
  # Its output files made here, so that one a full disk refuses is the wrapper's fault
  # (74, said on the wrapper's stderr), not a failure of a command that never ran.
  exec </dev/null
  if ! exec >"$sg_run_dir/stdout.log" 2>"$sg_run_dir/stderr.log"; then
    printf 'schedgen: %s: cannot create stdout.log and stderr.log in %s; not run\n' \
      "$sg_job" "$sg_run_dir" >&2
    exit 74
  fi
  if [ -z "$sg_item_name" ]; then
    sg_exec='exec'
    sg_run_command
    exit
  fi
  set +m                 # the command stays in this group
  trap : INT TERM HUP
  # Journaled here, not before the fork: a run that dies before its keeper gets this far
  # never started the command, and recovery returns the item without counting an attempt.
  # No record, no run (a full disk): a command that ran unrecorded would run again.
  if ! sg_jot s "$sg_item_name"; then
    printf 'schedgen: %s: could not journal the start of %s in %s; not run\n' \
      "$sg_job" "$sg_item_name" "$sg_journal" >&2
    exit 74
  fi
  sg_exec=''
  sg_run_command
  st=$?
  # Past its timeout (the watchdog marks the run before its TERM), an exit 0 is the
  # command's answer to the TERM, not the end of its work: as for a plain job, 124.
  if [ "$sg_timeout" -gt 0 ] && [ -e "$sg_run_dir/.timeout" ]; then st=124; fi
  if [ "$st" -eq 0 ]; then sg_jot d "$sg_item_name"; else sg_jot f "$sg_item_name"; fi
  exit "$st"
}

# sg_run_command: the job's command, or in a smoke run its smoke command (job file).
sg_run_command() {
  if [ "$sg_smoke" = 1 ] && [ "$sg_has_smoke" = 1 ]; then
    sg_smoke_command
  else
    sg_command
  fi
}

# sg_reap [SIG]: wait for the command's keeper, then for every process left in its
# group; with SIG, send SIG to the group first. A group that is still there 5 s after
# TERM gets KILL, keeper and all (a command that ignores TERM must not keep the run
# going). Sets sg_status unless it is set. This is the only place that waits for the
# command: a signal meanwhile is noted by its trap (sg_crit), which interrupts the
# wait; it is passed on here and the wait goes on, so no wait is ever nested in a trap.
sg_reap() {
  local n=0 st st2 seen sent=${1-} crit=$sg_crit
  [ -n "$sg_cmd_pid" ] || return 0
  [ -z "$sent" ] || kill -"$sent" -- "-$sg_cmd_pid" 2>/dev/null
  sg_crit=1
  while :; do
    seen=$sg_nsig
    if [ -n "$sent" ]; then
      # Told to stop: polled, not waited for, so that KILL comes on time (bash reaps
      # an ended child as it ends, so kill -0 then fails).
      while kill -0 "$sg_cmd_pid" 2>/dev/null; do
        [ "$n" -lt "$sg_grace" ] || kill -KILL -- "-$sg_cmd_pid" 2>/dev/null
        sleep 0.1
        n=$((n + 1))
      done
    fi
    wait "$sg_cmd_pid" 2>/dev/null
    st=$?
    if [ -n "$sg_signal" ] && [ -z "$sent" ]; then
      kill -TERM -- "-$sg_cmd_pid" 2>/dev/null
      sent=TERM
    fi
    [ "$seen" != "$sg_nsig" ] || break               # it ended: st is its status
    kill -0 "$sg_cmd_pid" 2>/dev/null && continue     # interrupted (or a zombie): again
    # It ended while a signal came: ask for its own status (bash 3.2 may no longer have
    # it if the wait above got it: 127).
    wait "$sg_cmd_pid" 2>/dev/null
    st2=$?
    [ "$st2" = 127 ] || st=$st2
    break
  done
  [ -n "$sg_status" ] || sg_status=$st
  [ -n "$sent" ] || n=0
  while kill -0 -- "-$sg_cmd_pid"; do
    # What the command left behind must not work on the item once it moves on.
    [ "$n" -ne 0 ] || kill -TERM -- "-$sg_cmd_pid"
    [ "$n" -lt "$sg_grace" ] || kill -KILL -- "-$sg_cmd_pid"
    sleep 0.1
    n=$((n + 1))
  done 2>/dev/null
  sg_cmd_pid=''
  sg_crit=$crit
}

# sg_run WANT: one run of the command: run directory, manifest, events, stdout/stderr
# files. WANT: how many runs are still to come, this one included (see sg_run_dir_new).
sg_run() {
  local fields=''
  sg_crit=1
  sg_now
  sg_started_at=$sg_iso sg_start_epoch=$sg_epoch
  sg_outcome=running sg_status='' sg_item_to='' sg_item_path=$sg_item
  if [ -n "$sg_inbox" ]; then sg_run_dir_new "$1"; else sg_run_dir_one; fi
  SCHEDGEN_RUN_ID=$sg_run_id
  SCHEDGEN_ARTIFACT_DIR=$sg_run_dir
  SCHEDGEN_ITEM=$sg_item
  export SCHEDGEN_RUN_ID SCHEDGEN_ARTIFACT_DIR SCHEDGEN_ITEM
  sg_mtext=''
  sg_manifest
  if [ -n "$sg_item_name" ]; then
    sg_js "$sg_item_name"
    fields=",\"item\":$sg_j,\"attempt\":$sg_attempt"
    sg_event claim "$fields"
  fi
  sg_event start "$fields,\"smoke\":$sg_smoke_j"
  sg_hook start
  # A signal held since the critical section began stops the run before the command
  # starts: it never ran, so an item goes back without counting an attempt.
  [ -z "$sg_signal" ] || sg_crit_end
  [ -z "$sg_item_name" ] || sg_started=1   # its keeper journals the start
  # The command runs in the background, in a process group of its own, so that a signal
  # to this script can be passed on to all of it while we wait; stdin is /dev/null, its
  # output goes to the run directory. Inside the critical section a signal waits until
  # $! is noted, so there is no moment when a command runs that we do not know of.
  set -m
  sg_keeper &
  sg_cmd_pid=$!
  if [ "$sg_timeout" -gt 0 ]; then
    sg_watchdog &
    sg_wd_pid=$!
  fi
  set +m
  sg_crit_end
  sg_reap
  sg_crit=1
  if [ -n "$sg_wd_pid" ]; then
    # A queue item's command that ended fine before its time (its keeper journaled it
    # done, which it does not past the mark) did not time out, even if what it left
    # behind kept the run going until the watchdog's time came.
    if [ -e "$sg_run_dir/.timeout" ] && [ -n "$sg_item_name" ] && [ -n "$sg_journal" ]; then
      sg_journal_read "$sg_journal"
      case $sg_jdone in *"/$sg_item_name/"*) sg_wd_stop ;; esac
    fi
    if [ -n "$sg_wd_pid" ] && [ -e "$sg_run_dir/.timeout" ]; then
      wait "$sg_wd_pid"
      rm -f "$sg_run_dir/.timeout"
      sg_wd_pid=''
      sg_status=124
      sg_outcome=timeout
      printf 'schedgen: %s: timed out after %ss; killed\n' "$sg_job" "$sg_timeout" >&2
      sg_now
      sg_event timeout ",\"after\":$sg_timeout"
    elif [ -n "$sg_wd_pid" ]; then
      sg_wd_stop
    fi
  fi
  sg_finish
  sg_crit_end
}

# sg_finish: the run's end: the item moves on, the manifest and the finish event. A done
# queue item's manifest says where it is now (its claim directory) and is written again
# once it has moved; its finish event waits for the move (sg_flush).
sg_finish() {
  local fields=''
  [ -n "$sg_status" ] || sg_status=70
  if [ "$sg_outcome" = running ]; then
    if [ -n "$sg_signal" ] && [ "$sg_status" -ne 0 ]; then sg_outcome=interrupted
    elif [ "$sg_status" -eq 0 ]; then sg_outcome=ok
    else sg_outcome=failed; fi
  fi
  sg_now
  if [ -z "$sg_inbox" ] || sg_item_end "$sg_status"; then
    sg_manifest
    if [ -n "$sg_item_name" ]; then
      sg_js "$sg_item_name"
      fields=",\"item\":$sg_j,\"attempt\":$sg_attempt,\"item_to\":\"$sg_item_to\""
    fi
    sg_event finish ",\"exit_code\":$sg_status,\"outcome\":\"$sg_outcome\",\"duration\":$((sg_epoch - sg_start_epoch))$fields"
    [ -n "$sg_inbox" ] || sg_hook finish
  else
    sg_manifest
    sg_d_mtext[sg_nd - 1]=$sg_mtext   # for sg_flush's rewrite
  fi
  [ "$sg_fg" != 1 ] || sg_show
  sg_run_dir=''
}

# --- logs and run directories --------------------------------------------------

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
  if [ -f "$1/manifest.json" ] && [ ! -L "$1/manifest.json" ]; then
    # The whole file in one read (quietly: another run may be removing it right now), up
    # to 64 KB: ours is a line of at most a few, a command's own could be any size.
    IFS= read -r -n 65536 -d '' text 2>/dev/null <"$1/manifest.json"
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
      pid=${pid%%-*} ;;
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
    if [ "$n" -gt 0 ] || [ ! -e "$d/manifest.json" ]; then
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

# --- exit and signals ------------------------------------------------------------

# On exit, whatever the path: the item and the run are settled, the claim released,
# logs rotated and old runs pruned.
sg_on_exit() {
  local st=$?
  [ "$BASH_SUBSHELL" = "$sg_shell" ] || return "$st"   # see sg_on_signal
  [ "$sg_lb" != 1 ] || enable -n mkdir   # the notify command is the job's own code
  trap '' INT TERM HUP
  sg_crit=2
  [ -z "$sg_wd_pid" ] || sg_wd_stop
  sg_reap TERM
  if [ -n "$sg_run_dir" ]; then
    [ -n "$sg_status" ] || sg_status=$st
    [ -n "$sg_signal" ] || [ "$sg_status" -eq 0 ] || sg_outcome=failed
    sg_finish
  fi
  if [ -n "$sg_inbox" ]; then
    sg_item_end "${sg_status:-$st}" || :
    sg_flush
    sg_release
    sg_close_claim
  fi
  # An item that could not be moved on (e.g. processed/ unwritable) is the wrapper's
  # failure, not the command's: say so in the exit status (EX_IOERR).
  if [ "$sg_fault" != 0 ] && [ "$st" -eq 0 ]; then
    st=74
    sg_outcome=failed
  fi
  if [ "$sg_nfy_started" = 1 ]; then   # a queue job's one finish (after its moves)
    sg_status=$st
    if [ "$st" -eq 0 ]; then sg_outcome=ok
    elif [ -n "$sg_signal" ]; then sg_outcome=interrupted
    elif [ "$sg_outcome" = ok ]; then sg_outcome=failed; fi
    sg_hook finish
  fi
  if [ "$sg_tidy" = 1 ]; then
    sg_rotate
    sg_prune
    sg_last_run_note
  fi
  [ "$st" != 74 ] || [ "$sg_fault" = 0 ] || exit 74
}

# INT, TERM, HUP: noted; inside a critical section acted on at its end (sg_crit_end).
# Acting: pass TERM on to the command's whole process group, wait until all of it has
# ended, then exit 128+N; the EXIT trap settles the item and the run as for any failure.
sg_on_signal() {
  # A signal pending when the keeper is forked can run this trap in the child before
  # bash resets it there: only the wrapper itself acts on it.
  [ "$BASH_SUBSHELL" = "$sg_shell" ] || return 0
  sg_nsig=$((sg_nsig + 1))
  if [ -z "$sg_signal" ]; then
    sg_signal=$1 sg_signum=$2
  fi
  [ "$sg_crit" = 0 ] || return 0
  sg_stop
}

sg_stop() {
  trap '' INT TERM HUP
  sg_crit=2
  sg_now
  sg_event signal ",\"signal\":\"$sg_signal\""
  sg_reap TERM
  exit $((128 + sg_signum))
}

sg_crit_end() {
  sg_crit=0
  [ -z "$sg_signal" ] || sg_stop
}

# --- the run -----------------------------------------------------------------------

# sg_main [--cron]: one run of the job. cron calls it with --cron (its output goes to
# cron.log), launchd with no argument, `schedgen run JOB` in the foreground.
sg_main() {
  if [ "${sg_api:-}" != "$sg_runtime_api" ]; then
    # shellcheck disable=SC2016  # the backticks are text: the command to run, quoted
    printf 'schedgen: %s: the runtime beside this job file is of another schedgen; run `schedgen apply`\n' "$sg_job" >&2
    exit 78
  fi
  sg_init
  # cron runs us with --cron: append our own output to the job's log, so the crontab
  # line stays a bare call and a deleted log directory never breaks it.
  if [ "${1-}" = --cron ]; then
    [ -d "$sg_log_dir" ] || mkdir -p "$sg_log_dir" 2>/dev/null
    exec >>"$sg_log_dir/cron.log" 2>&1
  fi
  # Start time and run ID (UTC); the ID is final once the run takes it (sg_new_id).
  sg_now
  sg_run_id=$sg_stamp-$$
  sg_start_epoch=$sg_epoch

  # Smoke runs write nothing until their checks pass; other runs make the log dir now.
  if [ "$sg_smoke" = 1 ]; then
    sg_record=0
  elif [ ! -d "$sg_log_dir" ] && ! mkdir -p "$sg_log_dir" 2>/dev/null; then
    sg_fail log_dir "cannot create the log directory $sg_log_dir"
  fi

  # Settings and secrets from the env file, read at run time (never copied into the job
  # file). Its own errors are not shown: they can quote its contents.
  if [ -n "$sg_env_file" ]; then
    [ -r "$sg_env_file" ] || sg_fail env_file "env file $sg_env_file is missing or unreadable"
    set +u
    set -a
    # shellcheck disable=SC1090  # the job's own file, known at run time only
    if ! . "$sg_env_file" 2>/dev/null; then
      set +a
      set -u
      sg_fail env_file "env file $sg_env_file failed to load (check it with: bash -n $sg_env_file)"
    fi
    set +a
    set -u
  fi
  sg_env                  # the job's environment from jobs.toml (after the file: it wins)
  if [ -n "$sg_working_dir" ]; then
    cd "$sg_working_dir" 2>/dev/null || sg_fail working_dir "working directory $sg_working_dir is missing"
  fi

  # The program must be on PATH (cron and launchd give a minimal one; this one is from jobs.toml).
  if [ -n "$sg_prog" ]; then
    command -v "$sg_prog" >/dev/null 2>&1 || sg_fail command "command not found: $sg_prog (PATH=$PATH)"
  fi
  if [ -n "$sg_smoke_prog" ] && [ "$sg_smoke" = 1 ]; then
    command -v "$sg_smoke_prog" >/dev/null 2>&1 || sg_fail command "smoke command not found: $sg_smoke_prog"
  fi
  sg_builtins             # PATH and the working directory as the command will have them

  # Smoke run: check the preconditions before touching anything (sg_smoke_checks).
  [ "$sg_smoke" != 1 ] || sg_smoke_checks

  # (A time-zone gate, when there is one, goes here: before the lock, writing nothing.)
  if [ -n "$sg_lock_name" ]; then
    sg_lock_dir_ok
    sg_take_lock
  fi

  trap sg_on_exit EXIT
  trap 'sg_on_signal INT 2' INT
  trap 'sg_on_signal TERM 15' TERM
  trap 'sg_on_signal HUP 1' HUP
  sg_tidy=1
  sg_id_floor_set

  # Queue: claim files from the inbox by rename(2), so exactly one run gets each.
  [ -z "$sg_inbox" ] || [ "$sg_smoke" = 1 ] || sg_queue_main

  sg_crit=1
  sg_run 1
  exit "$sg_status"
}

# Plain runs stop reading here: bash parses a sourced file as it goes, so what only a
# queue, a timeout, a smoke run or `schedgen run` needs costs a plain run nothing
# (inlined, --standalone, this line is a no-op and they are read anyway).
# sg_runtime_read: read to here (or to the end, which sets it too); the job file checks it,
# so that a runtime cut short is a message and exit 78, not a run of half of it.
[ -n "${sg_inbox:-}" ] || [ "${sg_timeout:-0}" != 0 ] || [ "${SCHEDGEN_SMOKE:-}" = 1 ] ||
  [ "${SCHEDGEN_FOREGROUND:-}" = 1 ] || { sg_runtime_read=1; return 0 2>/dev/null; }

# --- smoke runs, the foreground, timeouts --------------------------------------------

# sg_smoke_checks: a smoke run's checks, before anything is written; with no smoke
# command they are the smoke test (exit 0), else the smoke command runs next.
sg_smoke_checks() {
  export SCHEDGEN_SMOKE=1
  if [ -n "$sg_bash_command" ]; then
    bash -n -c "$sg_bash_command" || sg_fail command "the command is not valid bash"
  fi
  sg_writable "$sg_log_dir" || sg_fail log_dir "log directory $sg_log_dir is not writable"
  if [ -n "$sg_lock_name" ]; then
    sg_writable "$sg_lock_dir" || sg_fail lock "lock directory $sg_lock_dir is not writable"
    if [ -e "$sg_lock_dir/$sg_lock_name.lock" ]; then
      # Read-only, and only a plain file of ours (as sg_take_lock): a smoke run makes nothing.
      if [ ! -f "$sg_lock_dir/$sg_lock_name.lock" ] || [ ! -O "$sg_lock_dir/$sg_lock_name.lock" ]; then
        sg_fail lock "the lock file $sg_lock_dir/$sg_lock_name.lock is not a plain file of this user; refusing it"
      fi
      { exec 9<"$sg_lock_dir/$sg_lock_name.lock"; } 2>/dev/null || sg_fail lock "cannot open the lock file"
      sg_lock 9 0 || { printf 'schedgen: %s: lock %s is busy (a run is going on)\n' "$sg_job" "$sg_lock_name" >&2; exit "$sg_busy_exit"; }
      exec 9>&-
    fi
  fi
  if [ -n "$sg_inbox" ] && [ ! -d "$sg_inbox" ]; then
    printf 'schedgen: %s: note: inbox %s does not exist yet\n' "$sg_job" "$sg_inbox" >&2
  fi
  if [ "$sg_has_smoke" != 1 ]; then
    printf 'smoke ok\n'      # no smoke command: the checks were the smoke test
    exit 0
  fi
  # Then run the smoke command (with a queue, no item is claimed: {item} is empty).
  [ -d "$sg_log_dir" ] || mkdir -p "$sg_log_dir" 2>/dev/null || sg_fail log_dir "cannot create $sg_log_dir"
  sg_record=1
}

# sg_writable DIR: DIR is writable, or could be made (its nearest existing parent is).
sg_writable() {
  local d=$1
  while [ ! -e "$d" ]; do d=${d%/*}; [ -n "$d" ] || d=/; done
  [ -d "$d" ] && [ -w "$d" ]
}

# sg_show: in the foreground (`schedgen run`), the run's result and the end of its output.
sg_show() {
  [ "$sg_fg" = 1 ] || return 0
  printf 'schedgen: %s run %s: %s (exit %s, %ss)%s\n  %s\n' "$sg_job" "$sg_run_id" "$sg_outcome" \
    "${sg_status:-?}" "$((sg_epoch - sg_start_epoch))" "${sg_item_name:+, item $sg_item_name}" \
    "$sg_run_dir" >&2
  if [ -s "$sg_run_dir/stdout.log" ]; then
    printf -- '--- stdout (last 40 lines) ---\n'
    tail -n 40 "$sg_run_dir/stdout.log"
  fi
  if [ -s "$sg_run_dir/stderr.log" ]; then
    printf -- '--- stderr (last 40 lines) ---\n' >&2
    tail -n 40 "$sg_run_dir/stderr.log" >&2
  fi
}

# sg_watchdog: with a timeout, a process of its own that after sg_timeout seconds (or at
# once if the wrapper is gone) marks the run, sends TERM to the command's group and
# KILL 5 s later (sg_grace). It closes the lock descriptors first, so it never keeps a
# lock held. INT, TERM and HUP do not stop it (a `killall bash` would have ended the
# timeout unseen): the wrapper stops it with KILL (sg_wd_stop).
sg_watchdog() {
  local n=0
  trap '' INT TERM HUP
  exec 6>&- 7>&- 8>&- 9>&- </dev/null >/dev/null 2>&1
  while [ "$n" -lt "$sg_timeout" ] && kill -0 "$sg_wrapper_pid"; do sleep 1; n=$((n + 1)); done
  [ "$n" -lt "$sg_timeout" ] || : >"$sg_run_dir/.timeout"
  kill -TERM -- "-$sg_cmd_pid"
  n=0
  while kill -0 -- "-$sg_cmd_pid" && [ "$n" -lt "$sg_grace" ]; do sleep 0.1; n=$((n + 1)); done
  kill -KILL -- "-$sg_cmd_pid"
}

# sg_wd_stop: the command ended before its timeout: stop the watchdog. One that passed
# its time as the command ended may have marked the run meanwhile: the mark goes too.
sg_wd_stop() {
  kill -KILL -- "-$sg_wd_pid" 2>/dev/null
  wait "$sg_wd_pid" 2>/dev/null
  sg_wd_pid=''
  [ -z "$sg_run_dir" ] || [ ! -e "$sg_run_dir/.timeout" ] || rm -f "$sg_run_dir/.timeout"
}

# sg_close_claim: remove the claim directory, and any run directories made ahead and not
# used, with one rm (-d: only if empty). A claim that still holds an item (one that could
# not be moved) keeps its journal, and its .claim is dated 0 so that the next run moves
# the item on at once.
# shellcheck disable=SC2317  # called by sg_on_exit; shellcheck misses that when inlined
sg_close_claim() {
  set --
  while [ "$sg_ahead_i" -lt "$sg_ahead_n" ]; do
    set -- "$@" "$sg_runs/${sg_ahead[$sg_ahead_i]}"
    sg_ahead_i=$((sg_ahead_i + 1))
  done
  [ "$#" -eq 0 ] || rmdir "$@" 2>/dev/null
  if [ -z "$sg_claim_dir" ]; then
    # Ours and still without items (they come only once it is sg_claim_dir).
    [ -z "$sg_claim_new" ] ||
      LC_ALL=C rm -fd "$sg_claim_new/.journal" "$sg_claim_new/.claim" "$sg_claim_new" 2>/dev/null
    return 0
  fi
  if ! sg_claim_empty "$sg_claim_dir"; then
    # Dated 0 over the old line, in place and at its length: cut first and written again,
    # a full disk in between would leave it empty, and its "k" with it.
    printf '0%*s %s %s %s 2\n' $((${#sg_claim_ep} - 1)) '' "$$" "$sg_host" "${sg_claim_dir##*/}" \
      2>/dev/null 1<>"$sg_claim_dir/.claim"
  else
    LC_ALL=C rm -fd "$sg_journal" "$sg_journal.new" "$sg_claim_dir/.claim" "$sg_claim_dir" 2>/dev/null
  fi
}

# --- the queue -----------------------------------------------------------------

# sg_init_queue: the queue's globals (sg_init calls it for a queue job).
sg_init_queue() {
  sg_claim_dir='' sg_claim_new='' sg_journal='' sg_claim_ep=0
  sg_chunk=() sg_chunk_att=() sg_chunk_mine=() sg_chunk_ino=() sg_ck=0 sg_chunk_n=0
  sg_item_cnt=0 sg_item_mine=0 sg_item_ino=''   # the item's count (sg_count_of)
  sg_cnt_mine=0 sg_cnt_ino='' sg_i='' sg_lk5=0
  sg_done=() sg_nd=0   # done items of the chunk, still to be moved to processed/ (sg_flush)
  sg_fstk=() sg_nfs=0  # failed items that stay in the claim: sg_flush keeps their records
  sg_dstk=() sg_nds=0  # done items that stay in the claim, likewise (for the whole run)
  sg_jbad=0            # 1: the journal could not be brought up to date: claim no more
  sg_d_run=() sg_d_start=() sg_d_fin=() sg_d_dur=() sg_d_att=() sg_d_epoch=() sg_d_mine=() sg_d_ino=()
  sg_cands=() sg_ci=0 sg_nc=0 sg_pass_claimed=1 sg_count=0
  sg_ahead=() sg_ahead_i=0 sg_ahead_n=0 sg_ahead_s='' sg_ahead_m=1 sg_id_free=''
  sg_jdone=/ sg_jstarted=/ sg_jc=() sg_jclaimed=/
  sg_d_mtext=()
  sg_moved='' sg_tn=''
  sg_attempts=$sg_processing/.attempts
}

# sg_queue_main: the queue's run: recover, then claim and run items until none is left
# (or batch is done); exits.
sg_queue_main() {
  local d
  # Queue: claim files from the inbox by rename(2), so exactly one run gets each.
  for d in "$sg_inbox" "$sg_processing" "$sg_processed" "$sg_failed" "$sg_attempts"; do
    [ -d "$d" ] || mkdir -p "$d" 2>/dev/null || sg_fail queue "cannot create the queue directory $d"
  done
  # A claim is a rename: across file systems it would be a copy (fscheck.sh). Checked
  # before anything moves, stale claims included; 2 (cannot tell) does not stop a run.
  sg_same_fs "$sg_inbox" "$sg_processing" "$sg_processed" "$sg_failed"
  case $? in
    1) sg_fail queue "$sg_fs_msg" ;;
    2) [ "$sg_fg" != 1 ] || printf 'schedgen: %s: note: %s\n' "$sg_job" "$sg_fs_msg" >&2 ;;
  esac
  sg_crit=1
  sg_recover
  sg_counts_sweep
  sg_crit_end
  # Each item is a run of its own (run ID, run dir, manifest, events).
  while :; do
    sg_crit=1
    sg_next_item || break
    sg_item_cnt=${sg_chunk_att[$((sg_ck - 1))]:-0}
    sg_item_mine=${sg_chunk_mine[$((sg_ck - 1))]:-0} sg_item_ino=${sg_chunk_ino[$((sg_ck - 1))]:-}
    [ -z "$sg_signal" ] || sg_crit_end   # stopped before this item's run began
    sg_attempt=$((sg_item_cnt + 1))
    sg_run $((sg_chunk_n - sg_ck + 1))
    sg_count=$((sg_count + 1))
    sg_item_name='' sg_attempt=''
    # A failed item ends the run with its status, so one bad file cannot spin the queue.
    [ "$sg_status" -eq 0 ] || exit "$sg_status"
    [ "$sg_batch" -eq 0 ] || [ "$sg_count" -lt "$sg_batch" ] || break
  done
  sg_crit_end
  if [ "$sg_count" -eq 0 ]; then
    [ "$sg_fg" != 1 ] || printf 'schedgen: %s: queue empty, nothing to do\n' "$sg_job" >&2
    sg_event empty
    [ "$sg_nfy" != 1 ] || sg_notify_finish 0 empty "$sg_log_dir"
  fi
  exit 0
}

# sg_run_dir_new WANT: the next run's ID and directory (sg_run_id, sg_run_dir), for a run
# starting now. A run ID is its start time, so directories are made ahead only for runs
# that start within the same second: when WANT runs are still to come, up to sg_ahead_m
# are made with one mkdir; sg_ahead_m doubles (to sg_ahead_max) while runs come faster
# than that, and halves when a second passes with some unused (those are removed).
sg_run_dir_new() {
  local want=$1 n=0
  [ -d "$sg_runs" ] || mkdir -p "$sg_runs" 2>/dev/null
  if [ "$sg_ahead_i" -lt "$sg_ahead_n" ]; then
    if [ "$sg_ahead_s" = "$sg_stamp" ]; then
      sg_run_id=${sg_ahead[$sg_ahead_i]}
      sg_ahead_i=$((sg_ahead_i + 1))
      if [ -d "$sg_runs/$sg_run_id" ]; then
        sg_run_dir=$sg_runs/$sg_run_id
        return 0
      fi
    else
      # A second has passed: these would not name their runs' start times.
      set --
      while [ "$sg_ahead_i" -lt "$sg_ahead_n" ]; do
        set -- "$@" "$sg_runs/${sg_ahead[$sg_ahead_i]}"
        sg_ahead_i=$((sg_ahead_i + 1))
      done
      rmdir "$@" 2>/dev/null
      [ "$sg_ahead_m" -eq 1 ] || sg_ahead_m=$((sg_ahead_m / 2))
    fi
  elif [ "$sg_ahead_s" = "$sg_stamp" ] && [ "$sg_ahead_m" -lt "$sg_ahead_max" ]; then
    sg_ahead_m=$((sg_ahead_m * 2))
  fi
  [ "$want" -le "$sg_ahead_m" ] || want=$sg_ahead_m
  set --
  while [ "$n" -lt "$want" ]; do
    case $sg_id_free in
      "$sg_stamp"-*) sg_run_id=$sg_id_free ;;
      *) sg_new_id ;;
    esac
    sg_id_free=''
    sg_ahead[n]=$sg_run_id
    n=$((n + 1))
    set -- "$@" "$sg_runs/$sg_run_id"
  done
  sg_ahead_n=$n sg_ahead_i=1 sg_ahead_s=$sg_stamp   # noted first: sg_close_claim removes them
  sg_mkdir "$@" 2>/dev/null
  n=$?
  if [ "$n" -ne 0 ] && [ "$n" -le 128 ]; then
    # A name was taken meanwhile (a worker of the same pid in another pid namespace) or
    # cannot be made: which of them are ours cannot be told, so none is used or removed
    # (pruning takes the empty ones later); this run makes its own, one at a time.
    sg_ahead_n=0 sg_ahead_i=0
    sg_new_id
    sg_run_dir_make
    return 0
  fi
  sg_run_id=${sg_ahead[0]}
  # The IDs were free and hold our pid, so what exists now is ours (a mkdir killed by a
  # signal to the group made some or all of them). Not made: one at a time, with a new
  # ID while the name is taken.
  sg_run_dir=$sg_runs/$sg_run_id
  [ -d "$sg_run_dir" ] || sg_run_dir_make
}

# sg_move SRC DIR [COUNT ID JOURNAL NAME]: move SRC into DIR under its own name; if
# that is taken, as NAME.<run_id>.EXT (then -2, -3...; see sg_tagged). Never overwrites.
# Sets sg_moved to the new path. With a COUNT above 0 (a move to the inbox), the item's
# failed-attempt count ("COUNT ID", ID from sg_ino) is written under the name it is about
# to get, just before the move, so that whoever sees it there sees its count; journaled
# first in JOURNAL as "c<new name>/<NAME>", so that recovery can tell a count written for
# a move that never came. A count that cannot be written (a full disk) is no move: 1, and
# the item stays where it is, its attempt still journaled for a later run to count.
sg_move() {
  local LC_ALL=C name=${1##*/} dest n=1 k=0 tag inb=0
  [ "$2" != "$sg_inbox" ] || inb=1
  dest=$2/$name
  while :; do
    if [ ! -e "$dest" ] && [ ! -L "$dest" ]; then
      if [ "${3:-0}" -gt 0 ]; then
        [ -z "${5-}" ] || printf '\0c%s/%s/\0' "${dest##*/}" "$6" 2>/dev/null >>"$5"
        if ! printf '%s %s\n' "$3" "$4" 2>/dev/null >"$sg_attempts/${dest##*/}"; then
          # Moved back without it, the item would start again from 0 (for ever, on a disk
          # that stays full). What the cut write left is no one's count.
          rm -f "$sg_attempts/${dest##*/}" 2>/dev/null
          sg_fault_say "could not write the failed-attempt count of $name in $sg_attempts"
          return 1
        fi
        # The count takes the file's modification time: see sg_count_of.
        touch -r "$1" "$sg_attempts/${dest##*/}" 2>/dev/null
      fi
      mv -n "$1" "$dest" 2>/dev/null
      [ -e "$1" ] || [ -L "$1" ] || { sg_moved=$dest; return 0; }
      # Not moved (the name was taken meanwhile): the count is not that file's, unless
      # another run wrote its own there since.
      [ "${3:-0}" -eq 0 ] || sg_count_drop "${dest##*/}" "$4"
    fi
    [ "$n" -lt 20 ] || return 1
    n=$((n + 1))
    # Not moved though the name is free (mv killed by a signal to the group, or failing):
    # the same name again, not a new one it does not need.
    [ -e "$dest" ] || [ -L "$dest" ] || continue
    k=$((k + 1))
    tag=.$sg_run_id
    [ "$k" -eq 1 ] || tag=.$sg_run_id-$k
    sg_tagged "$name" "$tag" "$inb" || return 1
    dest=$2/$sg_tn
  done
}

# sg_tagged NAME TAG INBOX: sets sg_tn to NAME with TAG put in before its extension (the
# stem shortened to keep it within 255 bytes). Into the inbox (INBOX=1) the name must
# still match the pattern, or no run would claim it again: when that form does not
# (`*.tar.gz`, `*-ready`), TAG goes before the shortest ending that keeps it matching;
# 1 when none does (the item stays where it is, for a later run).
sg_tagged() {
  local LC_ALL=C name=$1 tag=$2 stem ext k=0 len=${#1}
  stem=$name ext=''
  case $name in ?*.*) stem=${name%.*} ext=.${name##*.} ;; esac
  [ "${#ext}" -le 32 ] || stem=$name ext=''
  while :; do
    [ $((${#stem} + ${#tag} + ${#ext})) -le 255 ] || stem=${stem:0:$((255 - ${#tag} - ${#ext}))}
    sg_tn=$stem$tag$ext
    [ "$3" = 1 ] || return 0
    # shellcheck disable=SC2254  # the pattern is a glob, matched on purpose
    case $sg_tn in $sg_pattern) return 0 ;; esac
    # The next ending, while a stem of at least a byte still fits beside it.
    [ "$k" -lt "$len" ] && [ $((${#tag} + k)) -lt 255 ] || return 1
    stem=${name:0:$((len - k))} ext=${name:$((len - k))}
    k=$((k + 1))
  done
}

# sg_ino PATH: sets sg_i to what tells PATH's file from another of its name, "INODE/SIZE"
# ('' if it cannot be told): file systems hand a freed inode out again at once, and a
# producer may give a new file the old one's time (tar, rsync -t, curl -R). A fork, so it
# is only asked for an item that has a count, or gets one.
sg_ino() {
  local IFS=' ' out
  sg_i=''
  # Sizes in bytes, whatever the job's environment says (GNU ls scales them by these).
  # -l spelled out: BSD ls implies it from -n only in its default mode (not with
  # COMMAND_MODE=legacy).
  out=$(LC_ALL=C LS_BLOCK_SIZE=1 BLOCK_SIZE=1 ls -dlin -- "$1" 2>/dev/null) || return 0
  set -f
  # shellcheck disable=SC2086  # split on purpose: inode, mode, links, uid, gid, size, ...
  set -- $out
  set +f
  [ "$#" -ge 6 ] || return 0
  case $1 in ''|*[!0-9]*) return 0 ;; esac
  case $6 in ''|*[!0-9]*) return 0 ;; esac
  sg_i=$1/$6
}

# sg_count_of PATH NAME: the failed attempts of the file at PATH (named NAME), in
# sg_attempt. Counts are kept as processing/.attempts/NAME, "COUNT INODE/SIZE": the count
# of the file with that inode and size (a rename keeps both), so a count under NAME that
# is another file's (a new file of that name, a count on its way in or left by a kill) is
# not taken: that file starts from 0. sg_cnt_mine=1 when the count there is this file's
# (sg_cnt_ino its ID). A count from a wrapper before inodes is taken as it is.
sg_count_of() {
  local c='' i=''
  sg_attempt=0 sg_cnt_mine=0 sg_cnt_ino=''
  [ -f "$sg_attempts/$2" ] || return 0
  IFS=' ' read -r c i 2>/dev/null <"$sg_attempts/$2"
  case $c in ''|0?*|*[!0-9]*) return 0 ;; esac   # 08 would be a bad octal number
  if [ -n "$i" ]; then
    # The count was given the file's modification time: a file with another one is a
    # new file, whose inode may be the one the file counted had (file systems hand freed
    # inodes out again at once), unless it was copied from the same one, times and all.
    [ ! "$1" -nt "$sg_attempts/$2" ] && [ ! "$1" -ot "$sg_attempts/$2" ] || return 0
    sg_ino "$1"
    [ "$sg_i" = "$i" ] || return 0
    sg_cnt_ino=$i
  fi
  sg_attempt=$c sg_cnt_mine=1
}

# sg_counts_sweep: remove the counts of files that are gone (withdrawn from the inbox by
# their producer), whose names are neither in the inbox nor in a claim. Under the counts'
# lock, so that no count is on its way in meanwhile; claims are looked at before the
# inbox, so an item moving from one to the other is seen in one of them.
sg_counts_sweep() {
  local c name d
  set -- "$sg_attempts"/* "$sg_attempts"/.[!.]*
  [ -e "$1" ] || [ -e "$2" ] || [ "$#" -gt 2 ] || return 0
  sg_counts_lock || return 0
  for c; do
    [ -f "$c" ] || continue
    name=${c##*/}
    for d in "$sg_processing"/*/; do
      if [ -e "$d$name" ] || [ -L "$d$name" ]; then continue 2; fi
    done
    if [ -e "$sg_inbox/$name" ] || [ -L "$sg_inbox/$name" ]; then continue; fi
    rm -f "$c" 2>/dev/null
  done
  sg_counts_unlock
}

# sg_counts_lock / sg_counts_unlock: the lock that writers of counts take in turn, a
# flock on the counts' folder itself (fd 5), so that two items of one name never write
# over, or remove, each other's count. Not nested: taken only when not held (sg_lk5).
# Without it (it cannot be had within 30 s) the write goes ahead.
sg_counts_lock() {
  [ "$sg_lk5" = 0 ] || return 1
  { exec 5<"$sg_attempts"; } 2>/dev/null || return 1
  if sg_lock 5 30 2>/dev/null; then sg_lk5=1; else exec 5>&-; return 1; fi
}
sg_counts_unlock() {
  [ "$sg_lk5" = 0 ] || { exec 5>&-; sg_lk5=0; }
}

# sg_count_drop NAME ID: remove the count under NAME if it is still the one of the file
# with that ID (sg_ino; '': a count from before inodes); another file's is left alone.
sg_count_drop() {
  local c='' i='' lk=0
  [ -f "$sg_attempts/$1" ] || return 0
  ! sg_counts_lock || lk=1
  if [ ! -s "$sg_attempts/$1" ]; then
    rm -f "$sg_attempts/$1"     # a write cut short
  else
    IFS=' ' read -r c i 2>/dev/null <"$sg_attempts/$1"
    [ "$i" != "$2" ] || rm -f "$sg_attempts/$1"
  fi
  [ "$lk" = 0 ] || sg_counts_unlock
}

# sg_item_back PATH NAME COUNT COUNTED [JOURNAL]: return an item to the inbox after a
# failed attempt (COUNTED=1, COUNT its number), or to failed/ once it has had
# max_attempts; COUNTED=0 returns it as it was, COUNT its failed attempts so far. The
# caller has run sg_count_of for it (sg_cnt_mine, sg_cnt_ino). A kill at any point
# gives an item more attempts, never fewer: a count lost on the way is a count of 0.
sg_item_back() {
  if [ "$4" = 1 ] && [ "$3" -ge "$sg_max_attempts" ]; then
    # The count first: killed in between, the item is still here (and counts again).
    [ "$sg_cnt_mine" != 1 ] || sg_count_drop "$2" "$sg_cnt_ino"
    sg_move "$1" "$sg_failed" || return 1
    sg_item_to=failed
    return 0
  fi
  local ino='' n=$3 lk=0 rc=0
  if [ "$n" -gt 0 ]; then
    # Told by what it is now, not as it was claimed: its command may have rewritten it.
    sg_ino "$1"
    ino=$sg_i
    [ -n "$ino" ] || n=0        # a count no file could be told by is no count
    ! sg_counts_lock || lk=1    # returns with a count go one at a time
  fi
  sg_move "$1" "$sg_inbox" "$n" "$ino" "${5-}" "$2" || rc=1
  [ "$lk" = 0 ] || sg_counts_unlock
  [ "$rc" = 0 ] || return 1
  sg_item_to=inbox
  # Back under a new name: the count under its old one is not a count of anything now.
  if [ "${sg_moved##*/}" != "$2" ] && [ "$sg_cnt_mine" = 1 ]; then
    sg_count_drop "$2" "$sg_cnt_ino"
  fi
}

# sg_item_end STATUS: the item's run ended. On success it is done (its keeper journaled
# it): it moves to processed/ with the chunk's other done items (sg_flush), which also
# writes its finish record. Otherwise it goes back (see above) and 0 is returned for
# sg_finish to write the record now; 1 means the record waits for sg_flush.
sg_item_end() {
  [ -n "$sg_item" ] || return 0
  local rc=0
  local st=$1
  if [ "$sg_started" = 1 ] && [ "$st" -ne 0 ] && [ -n "$sg_journal" ]; then
    # Its keeper's journal is what counts: a command it saw finish fine is done, and one
    # whose start it did not journal never started (the keeper was stopped first, or
    # could not write the journal and did not run it): that is not an attempt.
    sg_journal_read "$sg_journal"
    case $sg_jdone in
      *"/$sg_item_name/"*) st=0 sg_status=0 sg_outcome=ok ;;
      *) case $sg_jstarted in
           *"/$sg_item_name/"*) ;;
           *) sg_started=0
              # 74 from a keeper that ran nothing: it could not journal the start or make
              # the output files (it said which): the disk is likely full, claim no more.
              if [ "$st" = 74 ] && [ "$sg_jbad" = 0 ]; then
                sg_jbad=1
                sg_fault_say "$sg_item_name was not started (see above); this run claims no more items"
              fi ;;
         esac ;;
    esac
  fi
  if [ ! -e "$sg_item" ] && [ ! -L "$sg_item" ]; then
    sg_item_to=gone      # the command moved or removed it itself: so goes its count
    [ "$sg_item_mine" != 1 ] || sg_count_drop "$sg_item_name" "$sg_item_ino"
    sg_gone "$sg_item_name"
  elif [ "$sg_started" = 1 ] && [ "$st" -eq 0 ]; then
    sg_done[sg_nd]=$sg_item_name
    sg_d_run[sg_nd]=$sg_run_id
    sg_d_start[sg_nd]=$sg_started_at
    sg_d_fin[sg_nd]=$sg_iso
    sg_d_epoch[sg_nd]=$sg_epoch
    sg_d_dur[sg_nd]=$((sg_epoch - sg_start_epoch))
    sg_d_att[sg_nd]=$sg_attempt
    sg_d_mine[sg_nd]=$sg_item_mine sg_d_ino[sg_nd]=$sg_item_ino
    sg_nd=$((sg_nd + 1))
    rc=1
  else
    # A started item counts this attempt; one that never started goes back as it came.
    local n=$sg_item_cnt
    [ "$sg_started" != 1 ] || n=$((n + 1))
    sg_cnt_mine=$sg_item_mine sg_cnt_ino=$sg_item_ino
    sg_item_back "$sg_item" "$sg_item_name" "$n" "$sg_started" "$sg_journal" &&
      sg_item_path=$sg_moved
    if [ -z "$sg_item_to" ]; then
      sg_item_to=processing
      sg_stuck "$sg_item_name"
      if [ "$sg_started" = 1 ]; then
        sg_fstk[sg_nfs]=$sg_item_name
        sg_nfs=$((sg_nfs + 1))
      fi
    else
      sg_gone "$sg_item_name"
    fi
  fi
  sg_item='' sg_started=0 sg_item_cnt=0 sg_item_mine=0 sg_item_ino=''
  return "$rc"
}

# sg_gone NAME...: items that left the claim (moved on, or taken by their own command) are
# struck out of its journal ("x") before the next command runs: a file that command
# leaves under such a name is not taken for the item by a run that recovers the claim.
# Only while items of the chunk are still to run: after the last one nothing else runs
# in the claim before its journal is emptied for the next chunk (sg_journal_keep).
# Not written, the run claims no more (its records are not what the claim holds).
sg_gone() {
  [ "$#" -gt 0 ] && [ -n "$sg_journal" ] && [ "$sg_ck" -lt "$sg_chunk_n" ] || return 0
  sg_jot x "$@" || sg_stuck_journal
}

# sg_stuck NAME: say that an item could not be moved out of the claim directory; it stays
# there, journaled, for a later run to move on (sg_close_claim keeps the claim).
sg_stuck() {
  sg_fault_say "could not move $1 out of $sg_claim_dir; a later run moves it on"
}

# sg_fault_say MESSAGE: the wrapper could not do its own work (it exits 74): say so, on
# stderr and as an error event.
sg_fault_say() {
  sg_fault=1
  printf 'schedgen: %s: %s\n' "$sg_job" "$1" >&2
  sg_js "$1"
  sg_event error ",\"message\":$sg_j"
}

# sg_flush: move the chunk's done items to processed/ with one mv (-n: never over a file
# that got there meanwhile; such an item is moved under a new name), then write their
# manifests and finish lines (one append), saying where each item really is. An item
# that could not be moved stays journaled as done, for a later run to move.
sg_flush() {
  [ -n "$sg_journal" ] || return 0
  [ "$sg_nd" -gt 0 ] || return 0
  local i=0 name lines line to gone
  local sg_run_id=$sg_run_id sg_started_at=$sg_started_at sg_start_epoch=$sg_start_epoch \
    sg_iso=$sg_iso sg_epoch=$sg_epoch sg_item_name=$sg_item_name sg_item_path=$sg_item_path \
    sg_attempt=$sg_attempt sg_outcome=ok sg_status=0 sg_run_dir=$sg_run_dir \
    sg_mtext=$sg_mtext
  lines=() gone=()
  # Their failed-attempt counts go first: killed in between, a done item is still
  # journaled (recovery moves it on), and no count outlives its item.
  while [ "$i" -lt "$sg_nd" ]; do
    [ "${sg_d_mine[$i]:-0}" != 1 ] || sg_count_drop "${sg_done[$i]}" "${sg_d_ino[$i]-}"
    i=$((i + 1))
  done
  i=0
  set --
  while [ "$i" -lt "$sg_nd" ]; do
    set -- "$@" "$sg_claim_dir/${sg_done[$i]}"
    i=$((i + 1))
  done
  LC_ALL=C mv -n -- "$@" "$sg_processed/" 2>/dev/null
  i=0
  while [ "$i" -lt "$sg_nd" ]; do
    name=${sg_done[$i]}
    sg_run_id=${sg_d_run[$i]}
    to=processed
    sg_item_path=$sg_processed/$name
    if [ -e "$sg_claim_dir/$name" ] || [ -L "$sg_claim_dir/$name" ]; then
      if sg_move "$sg_claim_dir/$name" "$sg_processed"; then
        sg_item_path=$sg_moved
      else
        sg_stuck "$name"
        sg_dstk[sg_nds]=$name
        sg_nds=$((sg_nds + 1))
        to=processing
        sg_item_path=$sg_claim_dir/$name
      fi
    fi
    [ "$to" = processing ] || gone[${#gone[@]}]=$name
    sg_item_name=$name sg_attempt=${sg_d_att[$i]} sg_started_at=${sg_d_start[$i]}
    sg_iso=${sg_d_fin[$i]} sg_epoch=${sg_d_epoch[$i]} sg_start_epoch=$((sg_epoch - sg_d_dur[i]))
    sg_run_dir=$sg_runs/$sg_run_id
    sg_mtext=${sg_d_mtext[$i]-}
    [ ! -d "$sg_run_dir" ] || sg_manifest
    sg_js "$name"
    printf -v line '{"ts":"%s","event":"finish","job":%s,"run_id":"%s","pid":%s,"host":%s,"exit_code":0,"outcome":"ok","duration":%s,"item":%s,"attempt":%s,"item_to":"%s"}' \
      "$sg_iso" "$sg_job_j" "$sg_run_id" "$$" "$sg_host_j" "${sg_d_dur[$i]}" "$sg_j" "$sg_attempt" "$to"
    lines[i]=$line
    i=$((i + 1))
  done
  sg_nd=0
  sg_gone ${gone[@]+"${gone[@]}"}
  # One printf, so one write(2), per line: other workers append to the same file, and
  # O_APPEND keeps whole writes whole, not a chunk that stdio splits at 4 KB.
  if [ "$sg_record" = 1 ]; then
    i=0
    for line in ${lines[@]+"${lines[@]}"}; do printf '%s\n' "$line" || { i=1; break; }; done \
      2>/dev/null >>"$sg_events" || i=1
    [ "$i" = 0 ] || sg_lost
  fi
}

# sg_journal_keep: before the next chunk is claimed, rewrite the claim's journal with only
# what the items still in the claim need, so that no record of an item gone (moved on, or
# taken by its own command) is taken for a new file of its name claimed into it: done
# ones that could not move, and failed ones that could not go back (their start and
# failure: the attempt counts), of this chunk and every earlier one. With none, it is
# emptied (one open: no window). With some, it is written whole beside it and renamed
# over it (a fork, only after a fault): truncated and then written in place, a kill or a
# full disk in between would lose them, and a done item would run again. Until then (and
# as the run ends) the journal only grows: names no longer here are struck out (sg_gone),
# and nothing is claimed into it meanwhile.
sg_journal_keep() {
  local name
  [ -n "$sg_journal" ] || return 0
  set --
  for name in ${sg_dstk[@]+"${sg_dstk[@]}"}; do set -- "$@" "k$name" "d$name"; done
  for name in ${sg_fstk[@]+"${sg_fstk[@]}"}; do set -- "$@" "k$name" "s$name" "f$name"; done
  if [ "$#" -eq 0 ]; then
    { : >"$sg_journal"; } 2>/dev/null && return 0
  elif { printf '%s/\0' "$@" >"$sg_journal.new"; } 2>/dev/null &&
      LC_ALL=C mv -f "$sg_journal.new" "$sg_journal" 2>/dev/null; then
    return 0
  fi
  # Its records of items that have moved on are still in it: were an item of the same
  # name claimed into this claim again, recovery would take it for done. So this run
  # claims no more; the next one recovers the claim.
  rm -f "$sg_journal.new" 2>/dev/null
  sg_stuck_journal
}

# sg_stuck_journal: the claim's journal could not be brought up to date: this run claims
# no more (sg_jbad), said once.
sg_stuck_journal() {
  [ "$sg_jbad" = 0 ] || return 0
  sg_jbad=1
  sg_fault_say "could not write $sg_journal; this run claims no more items"
}

# sg_release: items claimed but not started (a run that stops early) go back to the
# inbox as they were, not counted as an attempt: one mv, then one by one any whose name
# was taken there meanwhile.
# shellcheck disable=SC2317  # called by sg_on_exit; shellcheck misses that when inlined
sg_release() {
  local f i
  set --
  while [ "$sg_ck" -lt "$sg_chunk_n" ]; do
    i=$sg_ck
    f=$sg_claim_dir/${sg_chunk[$i]}
    sg_ck=$((sg_ck + 1))
    [ -e "$f" ] || [ -L "$f" ] || continue
    if [ "${sg_chunk_att[$i]:-0}" -eq 0 ]; then
      set -- "$@" "$f"
    else
      # With the count read as it was claimed: the one under its name now may be another's.
      sg_cnt_mine=${sg_chunk_mine[$i]:-0} sg_cnt_ino=${sg_chunk_ino[$i]:-}
      sg_item_back "$f" "${f##*/}" "${sg_chunk_att[$i]}" 0 "$sg_journal" || sg_stuck "${f##*/}"
    fi
  done
  [ "$#" -gt 0 ] || return 0
  LC_ALL=C mv -n -- "$@" "$sg_inbox/" 2>/dev/null
  sg_cnt_mine=0 sg_cnt_ino=''
  for f; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    sg_item_back "$f" "${f##*/}" 0 0 || sg_stuck "${f##*/}"
  done
}

# sg_journal_read FILE [KIND]: the names its records mark claimed (sg_jclaimed: k, less
# those struck out since by x), done
# (sg_jdone) and started or failed (sg_jstarted), as /name/ lists, and the counts written
# for moves (c), as "<count's name>/<item's name>" in sg_jc. A record is "\0<r>/\0": the
# NUL before it parts it from one cut short before it (a full disk), and one cut short
# itself has no "/" at its end, so it is not taken for a record of a shorter name. KIND
# is the claim's .claim kind (default 2, ours): of another kind (a wrapper before these
# records) records may have no "/" and are taken as they are.
sg_journal_read() {
  local rec
  sg_jdone=/ sg_jstarted=/ sg_jc=() sg_jclaimed=/
  while IFS= read -r -d '' rec; do
    case $rec in
      */) rec=${rec%/} ;;
      *) [ "${2-2}" != 2 ] || continue ;;   # empty, or cut short
    esac
    case $rec in
      k*) sg_jclaimed=$sg_jclaimed${rec#k}/ ;;
      x*)                                   # struck out: taken by another, or gone
        rec=/${rec#x}/
        case $sg_jclaimed in *"$rec"*) sg_jclaimed=${sg_jclaimed%%"$rec"*}/${sg_jclaimed#*"$rec"} ;; esac ;;
      d*) sg_jdone=$sg_jdone${rec#d}/ ;;
      [sf]*) sg_jstarted=$sg_jstarted${rec#?}/ ;;
      c?*/?*) sg_jc[${#sg_jc[@]}]=${rec#c} ;;
    esac
  done 2>/dev/null <"$1"
}

# sg_claim_empty DIR: 0 when the claim DIR holds nothing but its own .claim and journal
# (a file a command left beside its item, hidden ones included, is something).
sg_claim_empty() {
  local f
  for f in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    case ${f##*/} in .claim|.journal|.journal.new) continue ;; esac
    if [ -e "$f" ] || [ -L "$f" ]; then return 1; fi
  done
  return 0
}

# sg_recover: move on the items of dead workers. A live worker holds its claim's .claim
# lock for as long as any process of its run lives (its command's included), so a claim
# whose lock we can take has no process left. Only claims older than stale_after are looked at, and those whose time
# is unknown or ahead of our clock (made while the clock ran ahead). Its .journal says
# what became of each item: done ones go to processed/, one that had started goes back to
# the inbox as a failed attempt, the ones not started go back as they were.
sg_recover() {
  local d f name c_epoch c_kind state age legacy counted
  for d in "$sg_processing"/*/; do
    d=${d%/}
    [ -d "$d" ] || continue
    c_epoch='' c_kind=''
    # "epoch pid host id kind": the kind is the last word (a host name may have a space).
    [ ! -f "$d/.claim" ] || { read -r c_epoch c_kind <"$d/.claim"; } 2>/dev/null
    c_kind=${c_kind##* }
    case $c_epoch in
      ''|0?*|*[!0-9]*) ;;
      *) age=$((sg_epoch - c_epoch))
         [ "$age" -lt 0 ] || [ "$age" -ge "$sg_stale_after" ] || continue ;;
    esac
    if [ -f "$d/.claim" ]; then
      { exec 6<"$d/.claim"; } 2>/dev/null || continue
      if ! sg_lock 6 0 2>/dev/null; then
        exec 6<&-
        continue
      fi
    else
      # No .claim: its run died making it, or is making it right now. Items only ever
      # arrive after .claim is locked, so the most it can hold is nothing: remove it if
      # empty (the maker then starts again), never move anything out of it.
      [ "$d" = "$sg_claim_new" ] || rmdir "$d" 2>/dev/null
      continue
    fi
    sg_jdone=/ sg_jstarted=/ sg_jc=() sg_jclaimed=/ legacy=0
    if [ -f "$d/.journal" ]; then
      sg_journal_read "$d/.journal" "$c_kind"
    elif [ -f "$d/.claim" ]; then
      legacy=1           # a claim of a wrapper before journals: one item, and it had started
    fi
    # Counts its run wrote for moves to the inbox that never came (the item is still
    # here): one under another name goes; one under the item's own name already holds
    # the attempt that failed (so it is not counted again).
    counted=/
    for f in ${sg_jc[@]+"${sg_jc[@]}"}; do
      name=${f#*/} f=${f%%/*}
      [ -e "$d/$name" ] || continue
      sg_count_of "$d/$name" "$f"
      if [ "$sg_cnt_mine" = 1 ]; then
        if [ "$f" = "$name" ]; then counted=$counted$name/; else sg_count_drop "$f" "$sg_cnt_ino"; fi
      elif [ -f "$sg_attempts/$f" ] && [ ! -s "$sg_attempts/$f" ]; then
        rm -f "$sg_attempts/$f"   # made empty, then killed before the count was in it
      fi
    done
    for f in "$d"/* "$d"/.[!.]* "$d"/..?*; do
      [ -e "$f" ] || [ -L "$f" ] || continue
      name=${f##*/}
      sg_item_to=''
      case $name in .claim|.journal|.journal.new) continue ;; esac
      # An item is a name its run journaled as claimed (a claim of a wrapper from before
      # such records, "k" missing in .claim: a name the inbox's pattern matches). Anything
      # else its command left beside its item: not an item (the inbox would never claim
      # it, or would take it for a new one); it goes to failed/, to be looked at.
      if ! sg_claimed "$name" "$c_kind"; then
        sg_attempt=0 state=foreign
        ! sg_move "$f" "$sg_failed" || sg_item_to=failed
        sg_recovered "$name" "$d" "$state"
        continue
      fi
      sg_count_of "$f" "$name"
      case $sg_jdone in
        *"/$name/"*) state='done' ;;
        *) case $sg_jstarted in
             *"/$name/"*) state=started ;;
             *) state=claimed ;;
           esac ;;
      esac
      [ "$legacy" = 0 ] || state=started
      if [ "$state" = 'done' ]; then
        sg_attempt=$((sg_attempt + 1))
        # Its count first (as in sg_flush): killed in between, it is still journaled done.
        [ "$sg_cnt_mine" != 1 ] || sg_count_drop "$name" "$sg_cnt_ino"
        if sg_move "$f" "$sg_processed"; then
          sg_item_to=processed
        fi
      elif [ "$state" = started ]; then
        case $counted in
          *"/$name/"*) [ "$sg_attempt" -gt 0 ] || sg_attempt=1 ;;
          *) sg_attempt=$((sg_attempt + 1)) ;;
        esac
        sg_item_back "$f" "$name" "$sg_attempt" 1 "$d/.journal"
      else
        sg_item_back "$f" "$name" "$sg_attempt" 0 "$d/.journal"
      fi
      sg_recovered "$name" "$d" "$state"
    done
    # Only an emptied claim goes; one with an item that could not be moved stays as it was.
    if sg_claim_empty "$d"; then
      rm -f "$d/.journal" "$d/.journal.new" "$d/.claim" 2>/dev/null
      rmdir "$d" 2>/dev/null
    fi
    exec 6<&-
  done
  sg_item_to='' sg_attempt=''
}

# sg_claimed NAME KIND: 0 if NAME, found in a dead claim of that .claim KIND, is an item
# (sg_jclaimed read from its journal): by the journal for claims that name what they
# claim (2), by the pattern for older ones (byte by byte, as the inbox is listed).
# Hidden names never are.
sg_claimed() {
  local LC_ALL=C
  case $1 in .*) return 1 ;; esac
  if [ "$2" = 2 ]; then
    case $sg_jclaimed in *"/$1/"*) return 0 ;; esac
    return 1
  fi
  # shellcheck disable=SC2254  # the pattern is a glob, matched on purpose
  case $1 in $sg_pattern) return 0 ;; esac
  return 1
}

# sg_recovered NAME CLAIM STATE: the recover event of an item moved on (sg_item_to,
# sg_attempt), if it moved.
sg_recovered() {
  local moved
  [ -n "$sg_item_to" ] || return 0
  sg_js "$1"
  moved=$sg_j
  sg_js "${2##*/}"
  sg_event recover ",\"item\":$moved,\"claim\":$sg_j,\"attempt\":$sg_attempt,\"item_to\":\"$sg_item_to\",\"state\":\"$3\""
}

# sg_open_claim: this run's claim directory processing/<id>/ (mkdir: never shared; <id> is
# the ID of the run's first run), with an empty .journal, and .claim ("epoch pid host id")
# locked on fd 8 for as long as the run lives. A claim made away by a recovering run
# while it had no .claim yet is made again under a new ID.
sg_open_claim() {
  local n=0
  sg_now
  while :; do
    n=$((n + 1))
    [ "$n" -le 20 ] || sg_fail queue "cannot create a claim directory in $sg_processing"
    sg_new_id
    sg_claim_new=$sg_processing/$sg_run_id   # noted first: sg_close_claim removes it if empty
    sg_mkdir "$sg_claim_new" 2>/dev/null || {
      [ -e "$sg_claim_new" ] || sg_fail queue "cannot create a claim directory in $sg_processing"
      sg_claim_new=''
      continue
    }
    # .claim locked before anything else: a claim without one, or with one unlocked, is
    # taken for dead by recovering runs (harmless while it is empty: we start again).
    { exec 8>"$sg_claim_new/.claim"; } 2>/dev/null || continue
    sg_lock 8 0 2>/dev/null || continue
    [ "$sg_claim_new/.claim" -ef /dev/fd/8 ] || continue
    { : >"$sg_claim_new/.journal"; } 2>/dev/null || sg_fail queue "cannot write in $sg_claim_new"
    break
  done
  # Its kind last, "2": its journal names what it claims, in records "\0<r>/\0".
  { printf '%s %s %s %s 2\n' "$sg_epoch" "$$" "$sg_host" "$sg_run_id" >&8; } 2>/dev/null ||
    sg_fail queue "cannot write in $sg_claim_new"
  sg_claim_ep=$sg_epoch
  sg_claim_dir=$sg_claim_new
  sg_journal=$sg_claim_dir/.journal
  sg_id_free=$sg_run_id
}

# sg_claim_chunk: claim the next few inbox files (byte order of names) with one mv into
# the claim dir. Each rename is atomic on its own: a file another run got first is just
# not there to move (mv's complaint is discarded), and the names that arrived are ours.
# Chunks are at most sg_chunk_max items, and a quarter of the names left, so that
# workers share a short queue; at most what is left of the batch. The inbox is listed
# once; again only with batch = 0, while the last pass claimed something. Run inside a
# critical section: a signal waits until the chunk is noted.
sg_claim_chunk() {
  local LC_ALL=C IFS= f max i k lk c
  sg_chunk=() sg_chunk_att=() sg_chunk_mine=() sg_chunk_ino=() sg_ck=0 sg_chunk_n=0
  while :; do
    max=$(((sg_nc - sg_ci + 3) / 4))
    [ "$max" -le "$sg_chunk_max" ] || max=$sg_chunk_max
    if [ "$sg_batch" -gt 0 ] && [ "$max" -gt $((sg_batch - sg_count)) ]; then
      max=$((sg_batch - sg_count))
    fi
    set --
    while [ "$sg_ci" -lt "$sg_nc" ] && [ "$#" -lt "$max" ]; do
      f=${sg_cands[$sg_ci]}
      sg_ci=$((sg_ci + 1))
      [ -f "$f" ] || continue
      if [ -z "$sg_claim_dir" ]; then
        sg_open_claim
      elif [ -e "$sg_claim_dir/${f##*/}" ] || [ -L "$sg_claim_dir/${f##*/}" ]; then
        continue           # an item of that name is stuck here: leave this one be
      fi
      set -- "$@" "$f"
    done
    if [ "$#" -gt 0 ]; then
      # Noted first: if the run stops during the mv, sg_release returns what came.
      sg_chunk=()          # none left of a round that others took whole
      for f; do
        sg_chunk[sg_chunk_n]=${f##*/}
        sg_chunk_n=$((sg_chunk_n + 1))
      done
      # Journaled first too ("k"): what a recovering run finds in the claim and not
      # there, its command left beside its item. No record, no claim (a full disk).
      if ! sg_jot k ${sg_chunk[@]+"${sg_chunk[@]}"}; then
        sg_chunk=() sg_chunk_n=0
        sg_stuck_journal
        return 1
      fi
      # With counts kept, the claim and the reading of its counts hold the counts' lock
      # (sg_counts_lock): a count written under a name just freed would not be read.
      lk=0
      c=("$sg_attempts"/* "$sg_attempts"/.[!.]*)
      if [ -e "${c[0]}" ] || [ -e "${c[1]}" ]; then ! sg_counts_lock || lk=1; fi
      LC_ALL=C mv -n -- "$@" "$sg_claim_dir/" 2>/dev/null
      i=0 k=0
      set --
      while [ "$i" -lt "$sg_chunk_n" ]; do
        f=${sg_chunk[$i]}
        if [ -e "$sg_claim_dir/$f" ] || [ -L "$sg_claim_dir/$f" ]; then
          sg_chunk[k]=$f
          k=$((k + 1))
        else
          set -- "$@" "$f"
        fi
        i=$((i + 1))
      done
      sg_chunk_n=$k
      # Names another worker took are struck out ("x") before any command runs, so that a
      # file a command leaves under such a name is not taken for an item. No record, no
      # run: what came goes back.
      if [ "$#" -gt 0 ] && ! sg_jot x "$@"; then
        sg_ck=0
        sg_release
        sg_chunk=() sg_chunk_n=0 sg_ck=0
        [ "$lk" = 0 ] || sg_counts_unlock
        sg_stuck_journal
        return 1
      fi
      # Their counts, read now: while an item waits its turn its name is free in the
      # inbox, and another item's count may come to be kept under it.
      i=0
      while [ "$i" -lt "$k" ]; do
        sg_count_of "$sg_claim_dir/${sg_chunk[$i]}" "${sg_chunk[$i]}"
        sg_chunk_att[i]=$sg_attempt sg_chunk_mine[i]=$sg_cnt_mine sg_chunk_ino[i]=$sg_cnt_ino
        i=$((i + 1))
      done
      [ "$lk" = 0 ] || sg_counts_unlock
      [ "$k" -eq 0 ] || break
      continue             # all taken by others: the next names
    fi
    if [ "$sg_batch" -ne 0 ]; then
      [ "$sg_nc" -eq 0 ] || return 1
    else
      [ "$sg_pass_claimed" = 1 ] || return 1
      sg_pass_claimed=0
    fi
    # shellcheck disable=SC2206  # the pattern is a glob, expanded here on purpose (IFS is empty)
    sg_cands=( "$sg_inbox"/$sg_pattern )
    sg_ci=0
    sg_nc=${#sg_cands[@]}
  done
  sg_pass_claimed=1
}

# sg_jot KIND NAME...: one journal record "\0<KIND><NAME>/\0" per NAME, with one write.
# A run appends its claim's records here (but c, which sg_move writes to the journal it is
# given, a dead claim's too). A caller tests this function's status, since bash applies
# no `!` to a compound command whose redirection failed (`! { ...; } >>file` is true when
# the file cannot be opened).
sg_jot() {
  local kind=$1
  shift
  # shellcheck disable=SC2059  # the kind is one letter of ours
  printf "\\0$kind%s/\\0" "$@" 2>/dev/null >>"$sg_journal"
}

# sg_next_item: the next claimed item (sg_item, sg_item_name); when the chunk is used up,
# its done items are moved on and the next chunk is claimed. Done items are also moved
# on before a new item when the last one took a second or more, so that slow items'
# records are not held back behind the next one.
sg_next_item() {
  while :; do
    if [ "$sg_ck" -ge "$sg_chunk_n" ]; then
      sg_flush
      sg_journal_keep
      [ "$sg_jbad" = 0 ] || return 1
      sg_claim_chunk || return 1
    elif [ "$sg_nd" -gt 0 ]; then
      sg_now
      if [ "$sg_epoch" != "${sg_d_epoch[0]}" ] || [ "${sg_d_dur[$((sg_nd - 1))]}" -gt 0 ]; then
        sg_flush
      fi
    fi
    # The journal is out of date: the rest of the chunk goes back (sg_release), unstarted.
    [ "$sg_jbad" = 0 ] || return 1
    sg_started=0 sg_item_name=${sg_chunk[$sg_ck]}
    sg_ck=$((sg_ck + 1))
    sg_item=$sg_claim_dir/$sg_item_name
    if [ -e "$sg_item" ] || [ -L "$sg_item" ]; then return 0; fi
    sg_item='' sg_item_name=''   # an earlier item's command took it away
  done
}
