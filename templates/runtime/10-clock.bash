# Clock and JSON: the time without `date`, strings as JSON.

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
