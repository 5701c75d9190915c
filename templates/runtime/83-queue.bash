
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
