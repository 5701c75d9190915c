"""A macOS-like userland for the wrapper tests: the bash macOS ships, and BSD tools.

`bash32()` finds GNU bash 3.2.48 (what /bin/bash is on every macOS): $SCHEDGEN_TEST_BASH32,
else ``shared/tools/bash-3.2`` beside the checkout. `bsd_bin(root)` makes a PATH folder
where flock, timeout and setsid (and other GNU-only tools) do not exist, `bash` is that
bash 3.2, and the tools the runtime calls are shims that take only what their BSD manual
page (macOS 11) lists, reject the rest with the BSD tool's own message and exit status,
and otherwise do the work with the GNU tool underneath. So a GNU-only option, or a
GNU habit (options after operands, `sed -i` without a suffix, `stat -c`, `date -d`),
fails the run as it would on a Mac (and is noted in $BSD_SHIM_LOG, so that a refusal
the runtime hides still fails the test). What a shim does not model (a BSD option the
runtime does not use) fails loudly with "not modelled" (status 2), never silently.

The shims are /bin/sh scripts (a fork and exec each; python would cost 30x more).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

# Tools stock macOS lacks (or has under another name): absent from the folder.
ABSENT = ("flock", "timeout", "setsid", "tac", "sha256sum", "sha1sum", "md5sum", "nproc",
          "stdbuf", "shuf", "numfmt", "readarray", "realpath", "mapfile")


def bash32() -> Path | None:
    """GNU bash 3.2 for these tests, or None when there is none here."""
    env = os.environ.get("SCHEDGEN_TEST_BASH32")
    if env:
        return Path(env) if os.access(env, os.X_OK) else None
    checkout = Path(__file__).resolve().parent.parent
    found = checkout.parent / "shared" / "tools" / "bash-3.2"
    return found if os.access(found, os.X_OK) else None


NO_BASH32 = ("GNU bash 3.2 not found: set SCHEDGEN_TEST_BASH32 to a bash 3.2 binary "
             "(or put one at ../shared/tools/bash-3.2 beside the checkout)")

_PRELUDE = """#!/bin/sh
# BSD {name}(1), as its manual page has it, over the GNU {name} ({real}).
real={real}
prog={name}
all="$*"
# Every refusal is also noted in $BSD_SHIM_LOG when set: the runtime hides most of its
# tools' errors (2>/dev/null), and the tests read the notes (tests/plugin.py).
refused() {{ [ -z "${{BSD_SHIM_LOG-}}" ] || printf '%s %s\\n' "$prog" "$all" >>"$BSD_SHIM_LOG"; }}
usage() {{
  refused
  printf '%s\\n' {usage} >&2
  exit {status}
}}
illegal() {{ printf '%s: illegal option -- %s\\n' "$prog" "$1" >&2; usage; }}
needarg() {{ printf '%s: option requires an argument -- %s\\n' "$prog" "$1" >&2; usage; }}
unmodelled() {{ refused; printf '%s (bsd shim): %s is not modelled\\n' "$prog" "$1" >&2; exit 2; }}
"""


def _q(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


# name: (usage lines, usage exit status, body). The body parses with getopts (which,
# like BSD getopt(3), stops at the first operand and reads "--long" as option "-").
SHIMS: dict[str, tuple[list[str], int, str]] = {
    "stat": (["usage: stat [-FLnq] [-f format | -l | -r | -s | -x] [-t timefmt] [file ...]"], 1, r"""
L= fmt=
while getopts ":FLnqf:lrst:x" o; do
  case $o in
    L) L=-L ;;
    f) fmt=$OPTARG ;;
    q) ;;
    n) unmodelled -n ;;
    F|l|r|s|t|x) unmodelled "-$o" ;;
    :) needarg "$OPTARG" ;;
    *) illegal "$OPTARG" ;;
  esac
done
shift $((OPTIND - 1))
[ -n "$fmt" ] || unmodelled "stat without -f"
rest=$(printf '%s' "$fmt" | @SED@ -e 's/%%//g; s/%S[ug]//g; s/%[dizmacugl]//g; s/%N//g')
case $rest in *%*) unmodelled "format $fmt" ;; esac
g=$(printf '%s' "$fmt" | @SED@ -e 's/%Su/%U/g; s/%Sg/%G/g; s/%z/%s/g; s/%m/%Y/g; s/%a/%X/g; s/%c/%Z/g; s/%l/%h/g; s/%N/%n/g')
st=0
for f in "$@"; do
  if ! "$real" $L -c "$g" -- "$f" 2>/dev/null; then
    printf 'stat: %s: stat: No such file or directory\n' "$f" >&2
    st=1
  fi
done
exit $st
"""),
    "date": (["usage: date [-jnRu] [-r seconds|file] [-v[+|-]val[ymwdHMS]]",
              "            [-I[date | hours | minutes | seconds]]",
              "            [-f fmt date | [[[[[cc]yy]mm]dd]HH]MM[.ss]] [+format]"], 1, r"""
j= f= r= R=
while getopts ":jnRuf:r:v:I" o; do
  case $o in
    j|n) j=1 ;;
    R) R=-R ;;
    u) TZ=UTC0; export TZ ;;
    f) f=$OPTARG ;;
    r) r=$OPTARG ;;
    v|I) unmodelled "-$o" ;;
    :) needarg "$OPTARG" ;;
    *) illegal "$OPTARG" ;;
  esac
done
shift $((OPTIND - 1))
set -f
when=
if [ -n "$f" ]; then
  [ $# -ge 1 ] || usage
  when=@$(@PYTHON@ -c '
import sys, time
fmt, text = sys.argv[1], sys.argv[2]
try:
    t = time.strptime(text, fmt)
except ValueError:
    sys.stderr.write("Failed conversion of ``%s'"'"''"'"' using format ``%s'"'"''"'"'\n" % (text, fmt))
    sys.exit(1)
now = time.localtime()
has = lambda *ds: any(d in fmt for d in ds)
parts = [t.tm_year if has("%Y", "%y") else now.tm_year, t.tm_mon if has("%m", "%b", "%B") else now.tm_mon,
         t.tm_mday if has("%d", "%e") else now.tm_mday, t.tm_hour if has("%H", "%I") else now.tm_hour,
         t.tm_min if has("%M") else now.tm_min, t.tm_sec if has("%S") else now.tm_sec, 0, 0, -1]
print(int(time.mktime(tuple(parts))))
' "$f" "$1") || { echo "date: illegal time format" >&2; usage; }
  shift
elif [ -n "$r" ]; then
  case $r in *[!0-9]*|'') [ -e "$r" ] || { printf 'date: %s: No such file or directory\n' "$r" >&2; exit 1; }; when=file ;;
    *) when=@$r ;;
  esac
fi
fmtarg=
case ${1-} in
  +*) fmtarg=$(printf '%s' "$1" | @SED@ -e 's/%N/N/g'); shift ;;   # BSD strftime: no %N
esac
if [ $# -gt 0 ]; then
  [ -n "$j" ] || { echo "date: settimeofday (timeval): Operation not permitted" >&2; exit 1; }
  unmodelled "setting a date"
fi
if [ "$when" = file ]; then set -- -r "$r"; elif [ -n "$when" ]; then set -- -d "$when"; else set --; fi
[ -z "$fmtarg" ] || set -- "$@" "$fmtarg"
exec "$real" $R "$@"
"""),
    "mv": (["usage: mv [-f | -i | -n] [-hv] source target",
            "       mv [-f | -i | -n] [-v] source ... directory"], 64, r"""
n= v=
while getopts ":finhv" o; do
  case $o in
    f|i) n= ;;
    n) n=1 ;;
    v) v=-v ;;
    h) unmodelled -h ;;
    *) illegal "$OPTARG" ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
if [ -z "$n" ]; then exec "$real" -f $v -- "$@"; fi
# -n: each target is looked at, then renamed to: two steps, not one (mv.c: "if (nflag)
# ... return (0)" before rename(2)), status 0 for a target left alone.
eval "dest=\${$#}"
if [ $# -gt 2 ] && [ ! -d "$dest" ]; then
  printf 'mv: %s is not a directory\n' "$dest" >&2; usage
fi
st=0
while [ $# -gt 1 ]; do
  src=$1; shift
  to=$dest
  if [ -d "$dest" ] && [ ! -L "$dest" ]; then
    b=${src%/}; to=${dest%/}/${b##*/}
  fi
  if [ -e "$to" ] || [ -L "$to" ]; then
    [ -z "$v" ] || printf '%s not overwritten\n' "$to"
    continue
  fi
  # A test's stand-in for whatever arrives at the target between the look and the rename.
  [ -z "${BSD_SHIM_RACE-}" ] || sh -c "$BSD_SHIM_RACE" sh "$to"
  if ! "$real" -f -T -- "$src" "$to" 2>/dev/null; then
    if [ -e "$src" ] || [ -L "$src" ]; then
      printf 'mv: rename %s to %s: Permission denied\n' "$src" "$to" >&2
    else
      printf 'mv: rename %s to %s: No such file or directory\n' "$src" "$to" >&2
    fi
    st=1
  fi
done
exit $st
"""),
    "find": (["usage: find [-H | -L | -P] [-EXdsx] [-f path] path ... [expression]",
              "       find [-H | -L | -P] [-EXdsx] -f path [path ...] [expression]"], 1, r"""
opts= paths=0
while getopts ":HLPEXdsxf:" o; do
  case $o in
    H|L|P) opts="$opts -$o" ;;
    d) unmodelled -d ;;
    E|s) unmodelled "-$o" ;;
    x) unmodelled -x ;;
    X) ;;
    f) unmodelled -f ;;
    :) needarg "$OPTARG" ;;
    *) illegal "$OPTARG" ;;
  esac
done
shift $((OPTIND - 1))
for a in "$@"; do
  case $a in -*|'('|')'|'!') break ;; esac
  paths=$((paths + 1))
done
[ "$paths" -gt 0 ] || usage
i=0 skip=0
for a in "$@"; do
  i=$((i + 1))
  [ "$i" -gt "$paths" ] || continue
  if [ "$skip" = exec ]; then case $a in ';'|+) skip=0 ;; esac; continue; fi
  if [ "$skip" -gt 0 ] 2>/dev/null; then skip=$((skip - 1)); continue; fi
  case $a in
    '('|')'|'!'|-a|-o|-and|-or|-not|-true|-false|-d|-delete|-depth|-empty|-ls|-mount|-xdev|\
    -noleaf|-nogroup|-nouser|-print|-print0|-prune|-quit|-xattr|-acl|-ignore_readdir_race|\
    -noignore_readdir_race) ;;
    -amin|-anewer|-atime|-Bmin|-Bnewer|-Btime|-cmin|-cnewer|-ctime|-flags|-fstype|-gid|\
    -group|-ilname|-iname|-inum|-ipath|-iregex|-iwholename|-links|-lname|-maxdepth|\
    -mindepth|-mmin|-mnewer|-mtime|-name|-newer|-newer[aBcmt][aBcmt]|-path|-perm|-regex|\
    -samefile|-size|-type|-uid|-user|-wholename|-xattrname) skip=1 ;;
    -exec|-execdir|-ok|-okdir) skip=exec ;;
    *) refused; printf 'find: %s: unknown primary or operator\n' "$a" >&2; exit 1 ;;
  esac
done
exec "$real" $opts "$@"
"""),
    "sed": (["usage: sed script [-Ealnru] [-i extension] [file ...]",
             "\tsed [-Ealnu] [-i extension] [-e script] ... [-f script_file] ... [file ...]"], 1,
            r"""
g= i= script=0
while getopts ":Ealnrui:I:e:f:" o; do
  case $o in
    E|r) g="$g -E" ;;
    n) g="$g -n" ;;
    l|u) g="$g -u" ;;
    a) ;;
    i|I) i=1 ext=$OPTARG ;;
    e) script=1; g="$g -e $(printf '%s' "$OPTARG" | @SED@ "s/'/'\\\\''/g; s/^/'/; s/\$/'/")" ;;
    f) script=1; g="$g -f '$OPTARG'" ;;
    :) needarg "$OPTARG" ;;
    *) illegal "$OPTARG" ;;
  esac
done
shift $((OPTIND - 1))
if [ "$script" = 0 ]; then
  [ $# -ge 1 ] || usage
  s=$1; shift
  g="$g -e $(printf '%s' "$s" | @SED@ "s/'/'\\\\''/g; s/^/'/; s/\$/'/")"
fi
if [ -n "$i" ]; then
  [ $# -ge 1 ] || { echo "sed: -I or -i may not be used with stdin" >&2; exit 1; }
  eval "exec \"\$real\" -i\"\$ext\" $g -- \"\$@\""
fi
eval "exec \"\$real\" $g -- \"\$@\""
"""),
    "touch": (["usage: touch [-A [-][[hh]mm]SS] [-achm] [-r file] [-t [[CC]YY]MMDDhhmm[.SS]]",
               "       [-d YYYY-MM-DDThh:mm:SS[.frac][tz]] file ..."], 1, r"""
g=
while getopts ":A:achmr:t:d:" o; do
  case $o in
    a|c|h|m) g="$g -$o" ;;
    r) ref=$OPTARG; g="$g -r \"\$ref\"" ;;
    t) t=$OPTARG; g="$g -t \"\$t\"" ;;
    d) case $OPTARG in
         [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][T\ ][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*) ;;
         *) refused; printf 'touch: out of range or illegal time specification: YYYY-MM-DDThh:mm:SS[.frac][tz]\n' >&2; exit 1 ;;
       esac
       d=$OPTARG; g="$g -d \"\$d\"" ;;
    A) unmodelled -A ;;
    :) needarg "$OPTARG" ;;
    *) illegal "$OPTARG" ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
eval "exec \"\$real\" $g -- \"\$@\""
"""),
    "readlink": (["usage: readlink [-n] [file ...]"], 1, r"""
while getopts ":n" o; do
  case $o in n) ;; *) illegal "$OPTARG" ;; esac
done
shift $((OPTIND - 1))
exec "$real" -- "$@"
"""),
    "ls": (["usage: ls [-@ABCFGHILOPRSTUWabcdefghiklmnopqrstuvwxy1%,] [--color=when] [-D format] [file ...]"], 1, r"""
g=
while getopts ":@ABCFGHILOPRSTUWabcdefghiklmnopqrstuvwxy1%,D:" o; do
  case $o in
    A|F|R|S|a|c|d|h|i|k|l|n|p|r|s|t|u|1) g="$g$o" ;;
    '?') illegal "$OPTARG" ;;
    :) needarg "$OPTARG" ;;
    *) unmodelled "-$o" ;;
  esac
done
shift $((OPTIND - 1))
exec "$real" ${g:+-$g} -- "$@"
"""),
    "rm": (["usage: rm [-f | -i] [-dIPRrvWx] file ...", "       unlink [--] file"], 64, r"""
g=
while getopts ":fidIPRrvWx" o; do
  case $o in
    f|i|d|I|R|r|v) g="$g$o" ;;
    P|W|x) unmodelled "-$o" ;;
    *) illegal "$OPTARG" ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || case $g in *f*) exit 0 ;; *) usage ;; esac
exec "$real" ${g:+-$g} -- "$@"
"""),
    "mkdir": (["usage: mkdir [-pv] [-m mode] directory_name ..."], 64, r"""
g=
while getopts ":pvm:" o; do
  case $o in
    p|v) g="$g -$o" ;;
    m) mode=$OPTARG; g="$g -m \"\$mode\"" ;;
    :) needarg "$OPTARG" ;;
    *) illegal "$OPTARG" ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
eval "exec \"\$real\" $g -- \"\$@\""
"""),
    "tail": (["usage: tail [-F | -f | -r] [-q] [-b # | -c # | -n #] [file ...]"], 1, r"""
g=
while getopts ":Ffrqb:c:n:" o; do
  case $o in
    F|f|q) g="$g -$o" ;;
    c|n) case $OPTARG in
           ''|*[!0-9+-]*) refused; printf 'tail: illegal offset -- %s\n' "$OPTARG" >&2; exit 1 ;;
         esac
         g="$g -$o $OPTARG" ;;
    r|b) unmodelled "-$o" ;;
    :) needarg "$OPTARG" ;;
    *) illegal "$OPTARG" ;;
  esac
done
shift $((OPTIND - 1))
exec "$real" $g -- "$@"
"""),
    "sleep": (["usage: sleep seconds"], 1, r"""
[ $# -eq 1 ] || usage
case $1 in
  ''|.|*[!0-9.]*|*.*.*) usage ;;   # a number only: no unit suffix, no -flag
esac
exec "$real" "$1"
"""),
    "ln": (["usage: ln [-s [-F] | -L | -P] [-f | -i] [-hnv] source_file [target_file]",
            "       ln [-s [-F] | -L | -P] [-f | -i] [-hnv] source_file ... target_dir",
            "       link source_file target_file"], 1, r"""
g=
while getopts ":FLPfhinsvw" o; do
  case $o in
    L|P|f|i|s|v) g="$g$o" ;;
    h|n) g="${g}n" ;;
    w) ;;
    F) unmodelled -F ;;
    *) illegal "$OPTARG" ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
# As mv's: what arrives at the target just before the link (which then finds it there).
if [ -n "${BSD_SHIM_RACE-}" ] && [ $# -eq 2 ]; then sh -c "$BSD_SHIM_RACE" sh "$2"; fi
exec "$real" ${g:+-$g} -- "$@"
"""),
}


def bsd_bin(root: Path) -> Path:
    """A PATH folder: the shims above, bash -> bash 3.2, every other program on PATH
    linked in, and none of ABSENT."""
    b32 = bash32()
    assert b32 is not None, NO_BASH32
    bindir = root / "bsd-bin"
    bindir.mkdir(parents=True, exist_ok=True)
    sed = shutil.which("sed", path="/usr/bin:/bin")
    python = shutil.which("python3", path="/usr/bin:/bin") or shutil.which("python3")
    assert sed and python
    for name, (usage, status, body) in SHIMS.items():
        real = shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin")
        assert real, name
        text = _PRELUDE.format(name=name, real=real, usage=" ".join(_q(u) for u in usage),
                               status=status) + body.replace("@SED@", sed).replace("@PYTHON@", python)
        (bindir / name).write_text(text)
        (bindir / name).chmod(0o755)
    (bindir / "bash").symlink_to(b32)
    # The system's folders only: the folder is made once per test worker, and a test's
    # PATH may hold that test's own fakes.
    for d in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        if not d or not os.path.isdir(d):
            continue
        for entry in os.scandir(d):
            name = entry.name
            if name in ABSENT or (bindir / name).exists() or (bindir / name).is_symlink():
                continue
            if entry.is_file() and os.access(entry.path, os.X_OK):
                (bindir / name).symlink_to(entry.path)
    return bindir
