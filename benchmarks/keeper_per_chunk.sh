#!/usr/bin/env bash
# A design the runtime does not use, measured: one keeper process for a whole chunk of
# queue items (fed item names through a FIFO, answering through another) against the
# runtime's keeper per item, both forked from a bash that has parsed the whole runtime
# (its heap is what makes forks dear). Each keeper journals the start and the end and
# runs /bin/true with its output in the item's run directory; nothing else of a run is
# done. Rounds alternate; times are per item. Usage: keeper_per_chunk.sh [ITEMS] [ROUNDS]
set -u
N=${1:-1000} ROUNDS=${2:-3}
here=$(cd "${0%/*}/.." && pwd)
for f in "$here"/templates/runtime/*; do SCHEDGEN_FOREGROUND=1 . "$f"; done >/dev/null 2>&1 </dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
j=$tmp/journal

fresh() {
  local i=0
  rm -rf "$tmp/runs"
  mkdir -p "$tmp/runs"
  while [ "$i" -lt "$N" ]; do mkdir "$tmp/runs/$i"; i=$((i + 1)); done
  : >"$j"
}

per_item() {
  local i=0 p
  while [ "$i" -lt "$N" ]; do
    set -m
    (
      trap : INT TERM HUP
      set +m
      exec </dev/null >"$tmp/runs/$i/stdout.log" 2>"$tmp/runs/$i/stderr.log"
      printf '\0s%s/\0' "$i" >>"$j"
      /bin/true "$i"
      st=$?
      printf '\0d%s/\0' "$i" >>"$j"
      exit "$st"
    ) &
    p=$!
    set +m
    wait "$p"
    i=$((i + 1))
  done
}

per_chunk() {
  local i=0 r
  rm -f "$tmp/in" "$tmp/out"
  mkfifo "$tmp/in" "$tmp/out"
  set -m
  (
    trap : INT TERM HUP
    set +m
    while IFS= read -r it; do
      printf '\0s%s/\0' "$it" >>"$j"
      /bin/true "$it" </dev/null >"$tmp/runs/$it/stdout.log" 2>"$tmp/runs/$it/stderr.log"
      st=$?
      printf '\0d%s/\0' "$it" >>"$j"
      echo "$st"
    done <"$tmp/in" >"$tmp/out"
  ) &
  set +m
  exec 3>"$tmp/in" 4<"$tmp/out"
  while [ "$i" -lt "$N" ]; do
    echo "$i" >&3
    read -r r <&4
    i=$((i + 1))
  done
  exec 3>&- 4<&-
  wait
}

now() { date +%s%N; }   # a fork, outside what is timed per item

echo "keeper per item against one keeper per chunk: $N items, $ROUNDS rounds," \
  "$(declare -F | wc -l | tr -d ' ') runtime functions loaded"
a_all=0 b_all=0
r=0
while [ "$r" -lt "$ROUNDS" ]; do
  fresh; t0=$(now); per_item; t1=$(now)
  fresh; t2=$(now); per_chunk; t3=$(now)
  a=$(( (t1 - t0) / N / 1000 )) b=$(( (t3 - t2) / N / 1000 ))
  echo "  round $((r + 1)): per item ${a} us an item, per chunk ${b} us an item"
  a_all=$((a_all + a)) b_all=$((b_all + b))
  r=$((r + 1))
done
echo "  all rounds: per chunk saves $(( (a_all - b_all) / ROUNDS )) us an item" \
  "($(( 100 * (a_all - b_all) / a_all ))% of the keeper's part)"
