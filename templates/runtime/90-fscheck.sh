# shellcheck shell=bash disable=SC2034  # sg_fs_msg is the caller's to read
# schedgen-managed: part of the wrapper runtime; plain bash 3.2, BSD and GNU userland.
#
# sg_same_fs DIR...: are all DIRs on one file system? A queue claim is rename(2) from
# the inbox into processing/; across file systems mv silently copies and deletes
# instead, and two runs can then both process one file. validate checks this when
# the folders exist; the wrapper checks again when it starts, because a mount can
# change after validate ran.
#
# A DIR that does not exist yet counts as its nearest existing parent (where mkdir
# would put it). Returns 0 when all are on one device; 1 when two differ, 2 when the
# device numbers cannot be read; on non-zero, sg_fs_msg says which and why. The
# runtime calls it once the queue folders exist and before the first claim:
#   sg_same_fs "$sg_inbox" "$sg_processing" "$sg_processed" "$sg_failed" ||
#     sg_fail queue "$sg_fs_msg"          # exit 78, a precondition
# Cost: one stat(1) for all folders (plus one more on a host whose stat is not the
# flavour its OSTYPE suggests, e.g. GNU coreutils first on a Mac's PATH).

sg_fs_msg=''
sg_fs_out=''

# sg_fs_devs gnu|bsd PATH...: the device number of each PATH, one a line, in sg_fs_out.
# GNU spells it `stat -c %d`, BSD `stat -f %d`; the wrong flavour either fails or
# prints something that is not one number a line, and then this returns 1. -L: a folder
# that is a symlink counts where it points (the link itself may be on another device).
sg_fs_devs() {
  local flavour=$1 line n=0
  shift
  if [ "$flavour" = gnu ]; then
    sg_fs_out=$(stat -L -c %d -- "$@" 2>/dev/null) || return 1
  else
    sg_fs_out=$(stat -L -f %d -- "$@" 2>/dev/null) || return 1
  fi
  while IFS= read -r line; do
    case $line in
      '' | *[!0-9]*) return 1 ;;
    esac
    n=$((n + 1))
  done <<EOF
$sg_fs_out
EOF
  [ "$n" -eq "$#" ]
}

sg_same_fs() {
  local p d i guess other line first_dev='' first=''
  local -a at names
  sg_fs_msg=''
  [ "$#" -ge 2 ] || return 0
  names=("$@")
  i=0
  for p in "$@"; do
    d=$p
    while [ ! -e "$d" ]; do
      case $d in
        */*) d=${d%/*}; [ -n "$d" ] || d=/ ;;
        *) d=. ;;
      esac
    done
    at[i]=$d
    i=$((i + 1))
  done
  case ${OSTYPE:-} in
    darwin* | *bsd*) guess=bsd other=gnu ;;
    *) guess=gnu other=bsd ;;
  esac
  if ! sg_fs_devs "$guess" ${at[@]+"${at[@]}"} && ! sg_fs_devs "$other" ${at[@]+"${at[@]}"}; then
    sg_fs_msg="cannot read the device numbers of the queue folders ($*) with stat"
    return 2
  fi
  i=0
  while IFS= read -r line; do
    if [ "$i" -eq 0 ]; then
      first_dev=$line
      first=${names[0]}
    elif [ "$line" != "$first_dev" ]; then
      sg_fs_msg="${names[i]} is on another file system than $first (device $line, not $first_dev): mv would copy and delete instead of renaming, so two runs could process one file; put the queue folders on one file system"
      return 1
    fi
    i=$((i + 1))
  done <<EOF
$sg_fs_out
EOF
  return 0
}
