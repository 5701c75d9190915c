# The queue: moving on the items of dead workers.

# sg_recover: move on the items of dead workers. A live worker holds its claim's .claim
# lock for as long as any process of its run lives (its command's included), so a claim
# whose lock we can take has no process left. Only claims older than stale_after are looked at, and those whose time
# is unknown or ahead of our clock (made while the clock ran ahead). Its .journal says
# what became of each item: done ones go to processed/, one that had started goes back to
# the inbox as a failed attempt, the ones not started go back as they were.
sg_recover() {
  local d f name c_epoch c_rest state age counted
  sg_rcv=1   # sg_move: a dead run's link cut short may be under its own tag
  for d in "$sg_processing"/*/; do
    d=${d%/}
    [ -d "$d" ] || continue
    c_epoch=''
    # "epoch pid host id 2" (a host name may have a space).
    [ ! -f "$d/.claim" ] || { read -r c_epoch c_rest <"$d/.claim"; } 2>/dev/null
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
    sg_jdone=/ sg_jstarted=/ sg_jc=() sg_jl=() sg_jclaimed=/
    # No journal: its run died before it made one, so before it claimed anything.
    [ ! -f "$d/.journal" ] || sg_journal_read "$d/.journal"
    sg_jlseen=/
    [ "${#sg_jl[@]}" -eq 0 ] || sg_recover_links "$d"
    # Counts its run wrote for moves to the inbox that never came (the item is still
    # here): one under another name goes; one under the item's own name already holds
    # the attempt that failed (so it is not counted again).
    counted=/
    for f in ${sg_jc[@]+"${sg_jc[@]}"}; do
      name=${f#*/} f=${f%%/*}
      [ -e "$d/$name" ] || continue
      case $sg_jlseen in *"/$name/"*) continue ;; esac
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
      case $sg_jlseen in *"/$name/"*) continue ;; esac   # sg_recover_links's
      # An item is a name its run journaled as claimed. Anything else its command left
      # beside its item: not an item (the inbox would never claim it, or would take it for
      # a new one); it goes to failed/, to be looked at.
      if ! sg_claimed "$name"; then
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
  sg_item_to='' sg_attempt='' sg_rcv=0
}

# sg_recover_links CLAIM: items its run was linking back into the inbox when it died
# (l, sg_mv1). One with a link more than it had then, or that is the file under its new
# name there, got there: its name here goes. One that has not cannot be told from one
# that got there and went on (claimed and taken away by its command, or withdrawn by its
# producer): given back it could run twice, so it goes to failed/, to be looked at
# (state unsure). Either way sg_recover moves it on no further (sg_jlseen), even when it
# could not be moved now: the claim stays, with its records, for the next run.
sg_recover_links() {
  local d=$1 r name nl new linked=/ seen=/
  for r in ${sg_jl[@]+"${sg_jl[@]}"}; do
    new=${r%%/*} r=${r#*/}
    name=${r%%/*} nl=${r#*/}
    if [ ! -f "$d/$name" ] || [ -L "$d/$name" ] || ! sg_claimed "$name"; then continue; fi
    seen=$seen$name/
    case $linked in *"/$name/"*) continue ;; esac
    sg_ino "$d/$name"
    # A link into failed/ is a recovering run's, cut short in the move below: not the inbox's.
    if [ "$d/$name" -ef "$sg_inbox/$new" ] ||
        { [ "${sg_links:-0}" -gt "$nl" ] && [ ! "$d/$name" -ef "$sg_failed/$name" ]; }; then
      linked=$linked$name/
    fi
  done
  sg_jlseen=$seen
  r=${seen#/}
  while [ -n "$r" ]; do
    name=${r%%/*} r=${r#*/}
    # Its count stays: it is the item's where it went on, and counts of names no longer
    # anywhere are swept (sg_counts_sweep).
    sg_count_of "$d/$name" "$name"
    sg_item_to=''
    case $linked in
      *"/$name/"*)
        rm -f -- "$d/$name" 2>/dev/null
        [ -e "$d/$name" ] || sg_item_to=inbox
        sg_recovered "$name" "$d" linked ;;
      *)
        ! sg_move "$d/$name" "$sg_failed" || sg_item_to=failed
        sg_recovered "$name" "$d" unsure ;;
    esac
  done
}

# sg_claimed NAME: 0 if NAME, found in a dead claim, is an item: its journal names it
# claimed (sg_jclaimed). Hidden names never are.
sg_claimed() {
  case $1 in .*) return 1 ;; esac
  case $sg_jclaimed in *"/$1/"*) return 0 ;; esac
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
