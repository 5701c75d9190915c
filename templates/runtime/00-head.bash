# schedgen runtime -- schedgen-managed: generated file, do not edit; `schedgen apply` replaces it.
# shellcheck shell=bash disable=SC2154,SC2034  # settings come from the job file, which reads sg_exec
#
# The shared part of every schedgen job: each job file beside it (<job>.sh) sets the
# job's settings as sg_* variables, defines sg_env / sg_command / sg_smoke_command,
# sources this file and calls sg_main. docs/design.md is the contract, docs/wrapper.md
# the user guide. Plain bash 3.2 with BSD tools (macOS) and bash 5 with GNU tools: no
# bash-4 syntax, no GNU-only options, nothing macOS lacks (flock, timeout, setsid).
# Nothing runs at source time but definitions and a zoned job's gate (81-tzgate.sh), so
# a job file can source it (`schedgen apply` replaces it by a rename: a run going on
# keeps reading the file it opened).
# Hot path: no cat/basename/dirname/wc/date per item (forks are the cost that counts):
# a queue item costs its command's fork and its keeper's; claims, run dirs and done
# moves are batched. The wrapper's own flock, mkdir, mv and rm on that path run with
# LC_ALL=C: under a UTF-8 LANG (a systemd user session has one) each would first load
# the locale's files (0.2-0.3 ms an exec). The command keeps the locale it is given.
#
# Put together by schedgen from the parts in its templates/runtime/, one per topic, each
# under a "# --- NAME ---" line; their comments are there, left out here (bash parses
# every line a run reads). A plain run reads up to the cut (80-cut.bash); what
# follows it is for queues, timeouts, smoke runs and `schedgen run`. Notify and pings:
# notify.sh (a file of its own, sourced by job files with notify settings), called
# through sg_hook.

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
  sg_tk=0               # tenths of a second since TERM (sg_term_kill)
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
  printf -v sg_idpid '%07d' "$$"   # the pid as run IDs hold it (sg_new_id)
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
  # Metrics (65-metrics.bash): this call's runs, added to the state as the wrapper ends.
  sg_m_n=0 sg_m_ok=0 sg_m_fail=0 sg_m_to=0 sg_m_int=0 sg_m_lok=0 sg_m_lfail=0
  sg_m_start=0 sg_m_dur=0 sg_m_code=0 sg_m_q=''
  # Set by the job file only when metrics_dir is (an older one sets none): else off.
  sg_metrics_file=${sg_metrics_file-} sg_metrics_labels=${sg_metrics_labels-}
  # The job file as called, made absolute before any cd: a run whose job was removed
  # meanwhile (uninstalled, disabled, pruned) writes no metrics file again (sg_metrics_end).
  # None when $0 names no file (a standalone file read from stdin or -c): always written.
  sg_self=''
  if [ -n "$sg_metrics_file" ]; then
    case $0 in /*) sg_self=$0 ;; *) sg_self=$PWD/$0 ;; esac
    [ -f "$sg_self" ] || sg_self=''
  fi
  # Notify (notify.sh): on when the job file set notify settings and this is no smoke run.
  sg_nfy=0 sg_nfy_started=0 sg_nfy_dir='' sg_nfy_item='' sg_nfy_rdir='' sg_nfy_rid=''
  # A plain job's try n of m, set by the runtime for its retries (none from outside).
  unset SCHEDGEN_ATTEMPT SCHEDGEN_MAX_ATTEMPTS
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
