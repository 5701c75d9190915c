# The queue: claiming items, running them one by one, giving back the rest.

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
  sg_jdone=/ sg_jstarted=/ sg_jc=() sg_jl=() sg_jclaimed=/ sg_jlseen=/
  sg_d_mtext=()
  sg_moved='' sg_tn='' sg_links='' sg_mvbsd=0 sg_rcv=0   # sg_mvbsd: 1 once mv turned out BSD's (sg_mvn)
  sg_attempts=$sg_processing/.attempts
  sg_qskip=/ sg_qst=0  # items that failed in this run ("/a/b/"), and the last one's status
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
    # A failed item (its attempt counted) waits for its next turn, a later run: this one
    # claims it no more and goes on with the others, and ends with its status. With
    # stop_on_failure (and under a job file from before it) the run ends at it.
    if [ "$sg_status" -ne 0 ]; then
      [ "${sg_stop_on_failure:-1}" = 0 ] || exit "$sg_status"
      # (and under the name it went back to the inbox by, when its own was taken there)
      sg_qskip=$sg_qskip$sg_item_name/${sg_item_path##*/}/ sg_qst=$sg_status
    fi
    sg_item_name='' sg_attempt=''
    [ "$sg_batch" -eq 0 ] || [ "$sg_count" -lt "$sg_batch" ] || break
  done
  sg_crit_end
  if [ "$sg_count" -eq 0 ]; then
    [ "$sg_fg" != 1 ] || printf 'schedgen: %s: queue empty, nothing to do\n' "$sg_job" >&2
    sg_event empty
    [ "$sg_nfy" != 1 ] || sg_notify_finish 0 empty "$sg_log_dir"
  fi
  exit "$sg_qst"
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

# sg_claim_chunk: claim the next few inbox files (byte order of names; with a batch, those
# that failed before last: sg_cands_order) with one mv into
# the claim dir. Each rename is atomic on its own: a file another run got first is just
# not there to move (mv's complaint is discarded), and the names that arrived are ours.
# Chunks are at most sg_chunk_max items, and a quarter of the names left, so that
# workers share a short queue; at most what is left of the batch. The inbox is listed
# once; again only with batch = 0, while the last pass claimed something. Run inside a
# critical section: a signal waits until the chunk is noted. IFS is empty for the
# inbox's glob only: bash 3.2 joins ${a[@]+"${a[@]}"} into one word where IFS is empty,
# here and in all this calls.
sg_claim_chunk() {
  local LC_ALL=C IFS=$' \t\n' f max i k lk kept
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
      case $sg_qskip in /) ;; *"/${f##*/}/"*) continue ;; esac   # failed here: next run
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
      kept=("$sg_attempts"/* "$sg_attempts"/.[!.]*)
      if [ -e "${kept[0]}" ] || [ -e "${kept[1]}" ]; then ! sg_counts_lock || lk=1; fi
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
    # The pattern is a glob, expanded here on purpose, and not split (IFS empty for this
    # line only).
    IFS=
    # shellcheck disable=SC2206
    sg_cands=( "$sg_inbox"/$sg_pattern )
    IFS=$' \t\n'
    sg_ci=0
    sg_nc=${#sg_cands[@]}
    [ "$sg_batch" -eq 0 ] || [ "$sg_nc" -eq 0 ] || sg_cands_order
  done
  sg_pass_claimed=1
}

# sg_cands_order: with a batch, the listed names that failed before (a count is kept for
# them) go after the others, in byte order still, so that items that keep failing do not
# take a run's batch run after run until max_attempts; they still come, behind the
# others. Only the order of the attempts changes: a claim is still a rename. One stat a
# name, and only while some count is kept.
sg_cands_order() {
  local f late=() nl=0
  set -- "$sg_attempts"/* "$sg_attempts"/.[!.]*
  [ "$#" -gt 2 ] || [ -e "$1" ] || [ -e "$2" ] || return 0
  set --
  for f in ${sg_cands[@]+"${sg_cands[@]}"}; do
    if [ -f "$sg_attempts/${f##*/}" ]; then
      late[nl]=$f
      nl=$((nl + 1))
    else
      set -- "$@" "$f"
    fi
  done
  [ "$nl" -gt 0 ] || return 0
  sg_cands=(${1+"$@"} ${late[@]+"${late[@]}"})
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
  # With BSD mv, one at a time: each linked back, journaled first (sg_mv1).
  if [ "$sg_mvbsd" = 0 ]; then
    LC_ALL=C mv --no-clobber -- "$@" "$sg_inbox/" 2>/dev/null
    [ "$?" -ne 64 ] || sg_mvbsd=1
  fi
  sg_cnt_mine=0 sg_cnt_ino=''
  for f; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    sg_item_back "$f" "${f##*/}" 0 0 "$sg_journal" || sg_stuck "${f##*/}"
  done
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
