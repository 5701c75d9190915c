# The queue: an item's end, its moves and its failed-attempt count.

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
  sg_mvn "$sg_processed" "$@"
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

# sg_move SRC DIR [COUNT ID JOURNAL NAME]: move SRC into DIR under its own name; if
# that is taken, as NAME.<run_id>.EXT (then -2, -3...; see sg_tagged). Never overwrites.
# Sets sg_moved to the new path. With a COUNT above 0 (a move to the inbox), the item's
# failed-attempt count ("COUNT ID", ID from sg_ino) is written under the name it is about
# to get, just before the move, so that whoever sees it there sees its count; journaled
# first in JOURNAL as "c<new name>/<NAME>", so that recovery can tell a count written for
# a move that never came. A count that cannot be written (a full disk) is no move: 1, and
# the item stays where it is, its attempt still journaled for a later run to count.
sg_move() {
  local LC_ALL=C name=${1##*/} dest n=1 k=0 tag inb=0 stem ext g
  [ "$2" != "$sg_inbox" ] || inb=1
  dest=$2/$name
  while :; do
    # Already there: linked, and killed before its old name went (sg_mv1). Not into the
    # inbox: a link cut short there is journaled (l, sg_recover_links), and the same file
    # under its name there is a producer's new delivery of it, to be kept apart, counted.
    if [ "$inb" = 0 ] && [ "$1" -ef "$dest" ] && [ ! -L "$1" ] && [ ! -L "$dest" ]; then
      rm -f -- "$1" 2>/dev/null
      [ -e "$1" ] || { sg_moved=$dest; return 0; }
    fi
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
      if sg_mv1 "$1" "$dest" "$inb" "${5-}"; then sg_moved=$dest; return 0; fi
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
    # Recovering a dead run's claim: it may have linked the item here under a name of its
    # own tag (NAME.<its run>.EXT) and died before the unlink: that is where it is.
    if [ "$k" -eq 1 ] && [ "$inb" = 0 ] && [ "$sg_rcv" = 1 ] && [ ! -L "$1" ]; then
      stem=$name ext=''
      case $name in ?*.*) stem=${name%.*} ext=.${name##*.} ;; esac
      [ "${#ext}" -le 32 ] || stem=$name ext=''
      for g in "$2/$stem".*"$ext"; do
        if [ "$1" -ef "$g" ] && [ ! -L "$g" ]; then
          rm -f -- "$1" 2>/dev/null
          [ -e "$1" ] || { sg_moved=$g; return 0; }
        fi
      done
    fi
    tag=.$sg_run_id
    [ "$k" -eq 1 ] || tag=.$sg_run_id-$k
    sg_tagged "$name" "$tag" "$inb" || return 1
    dest=$2/$sg_tn
  done
}

# No-replace moves. GNU mv -n asks the kernel not to replace a file (renameat2 with
# RENAME_NOREPLACE); BSD mv -n looks first and then renames, so a file that arrives in
# that instant (a producer's new one in the inbox, another run's item of the same name
# in processed/ or failed/) would be replaced, and lost. So mv is first asked in GNU's
# words (--no-clobber): BSD mv refuses them with 64 and moves nothing, and from then on
# the run links each file into place (link(2) never replaces) and removes its old name.
# Symlinks and folders, which are not linked, and file systems without hard links keep
# BSD mv -n (docs/wrapper.md).

# sg_mvn DIR SRC...: move each SRC into DIR under its own name unless that is taken
# there (it then stays where it is). For moves out of a claim to processed/.
sg_mvn() {
  local LC_ALL=C d=$1 f
  shift
  if [ "$sg_mvbsd" = 0 ]; then
    mv --no-clobber -- "$@" "$d/" 2>/dev/null
    [ "$?" -eq 64 ] || return 0
    sg_mvbsd=1
  fi
  set -- "$@" /
  while [ "$1" != / ]; do
    f=$1
    shift
    if [ -L "$f" ] || [ -d "$f" ]; then mv -n "$f" "$d/" 2>/dev/null; else set -- "$@" "$f"; fi
  done
  shift
  [ "$#" -gt 0 ] || return 0
  # One ln for them all (it goes on past a name that is taken), then one rm of the old
  # names of those now there; one not linked with its name still free is on a file
  # system without hard links, and moves as BSD mv moves it.
  ln -- "$@" "$d/" 2>/dev/null
  set -- "$@" /
  while [ "$1" != / ]; do
    f=$1
    shift
    if [ "$f" -ef "$d/${f##*/}" ]; then
      set -- "$@" "$f"
    elif [ -e "$f" ] && [ ! -e "$d/${f##*/}" ] && [ ! -L "$d/${f##*/}" ]; then
      mv -n "$f" "$d/" 2>/dev/null
    fi
  done
  shift
  [ "$#" -eq 0 ] || rm -f -- "$@" 2>/dev/null
}

# sg_mv1 SRC DEST INBOX JOURNAL: move SRC to DEST unless DEST is taken; 0 when it got
# there. Linked into the inbox (INBOX=1) with a JOURNAL, "l<new>/<name>/<links>" is
# journaled first: killed between the link and the removal of its old name, the item
# is in the inbox and still in its claim, and recovery must not give it back a second
# time (sg_recover). Not journaled (a full disk), it moves as BSD mv moves it.
sg_mv1() {
  local LC_ALL=C
  if [ "$sg_mvbsd" = 0 ]; then
    mv --no-clobber --no-target-directory -- "$1" "$2" 2>/dev/null
    if [ "$?" -ne 64 ]; then
      if [ -e "$1" ] || [ -L "$1" ]; then return 1; fi
      return 0
    fi
    sg_mvbsd=1
  fi
  # A folder under its name (mv and ln would put it inside): taken.
  if [ -d "$2" ]; then return 1; fi
  if [ -L "$1" ] || [ -d "$1" ] ||
      { [ "$3" = 1 ] && [ -n "$4" ] && ! { sg_ino "$1"; [ -n "$sg_links" ] &&
        printf '\0l%s/%s/%s/\0' "${2##*/}" "${1##*/}" "$sg_links" 2>/dev/null >>"$4"; }; }; then
    mv -n "$1" "$2" 2>/dev/null
  elif ln -- "$1" "$2" 2>/dev/null; then
    # Linked into a folder that arrived under its name meanwhile: not there. (Not told by
    # "$1" -ef "$2": another run may have claimed it from there already.)
    if [ -d "$2" ] && [ ! -L "$2" ] && [ "$1" -ef "$2/${1##*/}" ]; then
      rm -f -- "$2/${1##*/}" 2>/dev/null
    else
      rm -f -- "$1" 2>/dev/null
      return 0                # there; an old name left is a second name, recovery's
    fi
  elif [ -e "$1" ] && [ ! -e "$2" ] && [ ! -L "$2" ]; then
    mv -n "$1" "$2" 2>/dev/null   # not linked, its name free: no hard links here
  fi
  if [ -e "$1" ] || [ -L "$1" ]; then return 1; fi
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
# is only asked for an item that has a count, or gets one (or is linked: sg_links, its
# number of links, for sg_mv1).
sg_ino() {
  local IFS=' ' out
  sg_i='' sg_links=''
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
  sg_i=$1/$6 sg_links=$3
}

# sg_count_of PATH NAME: the failed attempts of the file at PATH (named NAME), in
# sg_attempt. Counts are kept as processing/.attempts/NAME, "COUNT INODE/SIZE": the count
# of the file with that inode and size (a rename keeps both), so a count under NAME that
# is another file's (a new file of that name, a count on its way in or left by a kill) is
# not taken: that file starts from 0. sg_cnt_mine=1 when the count there is this file's
# (sg_cnt_ino its ID). A count without an ID is no one's.
sg_count_of() {
  local c='' i=''
  sg_attempt=0 sg_cnt_mine=0 sg_cnt_ino=''
  [ -f "$sg_attempts/$2" ] || return 0
  IFS=' ' read -r c i 2>/dev/null <"$sg_attempts/$2"
  case $c in ''|0?*|*[!0-9]*) return 0 ;; esac   # 08 would be a bad octal number
  [ -n "$i" ] || return 0
  # The count was given the file's modification time: a file with another one is a new
  # file, whose inode may be the one the file counted had (file systems hand freed inodes
  # out again at once), unless it was copied from the same one, times and all.
  [ ! "$1" -nt "$sg_attempts/$2" ] && [ ! "$1" -ot "$sg_attempts/$2" ] || return 0
  sg_ino "$1"
  [ "$sg_i" = "$i" ] || return 0
  sg_attempt=$c sg_cnt_mine=1 sg_cnt_ino=$i
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
# with that ID (sg_ino); another file's is left alone.
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
