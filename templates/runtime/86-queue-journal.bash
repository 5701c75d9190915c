# The queue: the claim's journal (docs/wrapper.md, "The claim's journal").

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

# sg_journal_read FILE: the names its records mark claimed (sg_jclaimed: k, less those
# struck out since by x), done (sg_jdone) and started or failed (sg_jstarted), as /name/
# lists, the counts written for moves (c), as "<count's name>/<item's name>" in
# sg_jc, and the links begun into the inbox (l), as "<new name>/<item's name>/<links>"
# in sg_jl. A record is "\0<r>/\0": the NUL before it parts it from one cut short before it
# (a full disk), and one cut short itself has no "/" at its end, so it is not taken for a
# record of a shorter name.
sg_journal_read() {
  local rec
  sg_jdone=/ sg_jstarted=/ sg_jc=() sg_jl=() sg_jclaimed=/
  while IFS= read -r -d '' rec; do
    case $rec in
      */) rec=${rec%/} ;;
      *) continue ;;                        # empty, or cut short
    esac
    case $rec in
      k*) sg_jclaimed=$sg_jclaimed${rec#k}/ ;;
      x*)                                   # struck out: taken by another, or gone
        rec=/${rec#x}/
        case $sg_jclaimed in *"$rec"*) sg_jclaimed=${sg_jclaimed%%"$rec"*}/${sg_jclaimed#*"$rec"} ;; esac ;;
      d*) sg_jdone=$sg_jdone${rec#d}/ ;;
      [sf]*) sg_jstarted=$sg_jstarted${rec#?}/ ;;
      c?*/?*) sg_jc[${#sg_jc[@]}]=${rec#c} ;;
      l?*/?*/[0-9]*) sg_jl[${#sg_jl[@]}]=${rec#l} ;;
    esac
  done 2>/dev/null <"$1"
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

# sg_stuck_journal: the claim's journal could not be brought up to date: this run claims
# no more (sg_jbad), said once.
sg_stuck_journal() {
  [ "$sg_jbad" = 0 ] || return 0
  sg_jbad=1
  sg_fault_say "could not write $sg_journal; this run claims no more items"
}
