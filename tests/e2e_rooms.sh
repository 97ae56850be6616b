#!/bin/sh
# End to end: the source tree's rooms (docs/design.md, "Rooms and what they
# include") keep their floors. A file includes headers only from its own room
# or from rooms on lower floors (include/twoface.h belongs to the executor's
# floor); no two rooms hold a file of the same name; and no two object files
# of the libraries and programs call each other, directly or in a circle
# (their symbols, read with nm from the build tree).
# Environment: TF_SRCDIR, TF_BUILD (tests/run_tests.sh sets them).
# Last line: "e2e_rooms: N passed, M failed"; exit status 1 if M > 0.
E2E_NAME=e2e_rooms
. "${TF_SRCDIR:-.}/tests/lib_e2e.sh"

cd "$SRC" || exit 1
export LC_ALL=C
floor() { # room -> floor number
    case $1 in
    format | format/plugin) echo 0 ;;
    mpi) echo 1 ;;
    planner | executor | include) echo 2 ;;
    baselines | calibrate) echo 3 ;;
    context | gnn) echo 4 ;;
    cli) echo 5 ;;
    *) echo -1 ;;
    esac
}
rooms="format format/plugin mpi planner executor include baselines calibrate context gnn cli"

# Every file of a room, "name room" per line.
for r in $rooms; do
    for f in "$r"/*.c "$r"/*.h; do
        [ -f "$f" ] && echo "${f##*/} $r"
    done
done | sort >"$work/files"

dups=$(awk '{ n[$1]++; where[$1] = where[$1] " " $2 } END { for (f in n) if (n[f] > 1) print f ":" where[f] }' \
    "$work/files")
if [ -z "$dups" ]; then
    ok "no two rooms hold a file of the same name"
else
    bad "file names in more than one room: $dups"
fi

# upward ROOM FILE: the includes of FILE (in ROOM) that leave ROOM for a
# room on its own floor or above, one line each.
upward() {
    fr=$(floor "$1")
    sed -n 's/^#include "\([^"]*\)".*/\1/p' "$2" | while read -r h; do
        t=$(awk -v h="${h##*/}" '$1 == h { print $2; exit }' "$work/files")
        [ -n "$t" ] && [ "$t" != "$1" ] || continue
        ft=$(floor "$t")
        case $1 in "$t"/*) continue ;; esac # a sub-room uses its room
        [ "$ft" -lt "$fr" ] || [ "$1:$t" = "executor:include" ] ||
            echo "$2 includes $t/$h (floor $ft from floor $fr)"
    done
}
: >"$work/upward"
for r in $rooms; do
    for f in "$r"/*.c "$r"/*.h; do
        [ -f "$f" ] && upward "$r" "$f" >>"$work/upward"
    done
done
if [ -s "$work/upward" ]; then
    bad "includes that run sideways or upward: $(cat "$work/upward")"
else
    ok "every include runs to the file's own room or a lower floor"
fi
# The same check catches a planner file that includes a program's header or
# a baseline's, and lets one through that includes format/ only.
printf '#include "tf_cli.h"\n#include "tf_baseline.h"\n#include "tf_csr.h"\n' >"$work/probe.c"
probe=$(upward planner "$work/probe.c" | wc -l)
[ "$probe" -eq 2 ] && ok "a planner file including cli/ and baselines/ headers is caught" ||
    bad "probe: $probe upward includes found, expected 2"

# Calls between object files: defined and undefined global symbols.
objs=$(find "$B/obj" -name '*.o' ! -path '*/tests/*' 2>/dev/null)
if [ -z "$objs" ]; then
    bad "no object files under $B/obj (build first)"
    finish
fi
# Objects whose source is gone (a file moved since that build) are left out.
for o in $objs; do
    f=${o#"$B/obj/"}
    [ -f "${f%.o}.c" ] || continue
    nm -g --defined-only "$o" | awk -v f="${f%.o}" 'NF == 3 { print $3, f }'
done | sort >"$work/defs"
for o in $objs; do
    f=${o#"$B/obj/"}
    [ -f "${f%.o}.c" ] || continue
    nm -u "$o" | awk -v f="${f%.o}" '{ print $NF, f }'
done | sort >"$work/uses"
join "$work/uses" "$work/defs" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$work/calls"
if [ "$(wc -l <"$work/calls")" -lt 100 ]; then
    bad "only $(wc -l <"$work/calls") calls between object files: nm read nothing useful"
    finish
fi
cat >"$work/scc.py" <<'EOF'
import sys
from collections import defaultdict
edges = defaultdict(set)
for line in open(sys.argv[1]):
    a, b = line.split()
    edges[a].add(b)
# Tarjan's strongly connected components, iteratively.
index, low, on, stack, out, n = {}, {}, set(), [], [], 0
for root in list(edges):
    if root in index:
        continue
    work = [(root, iter(edges[root]))]
    index[root] = low[root] = n; n += 1; stack.append(root); on.add(root)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = n; n += 1; stack.append(w); on.add(w)
                work.append((w, iter(edges[w])))
            elif w in on:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(' '.join(sorted(comp)))
print('; '.join(out))
EOF

if ! cycles=$(python3 "$work/scc.py" "$work/calls"); then
    bad "the circle search failed on the call graph: $cycles"
elif [ -z "$cycles" ]; then
    ok "no two object files call each other, directly or in a circle"
else
    bad "object files calling each other: $cycles"
fi
# The same search finds a circle and leaves a chain alone.
printf 'a b\nb c\nc a\nc d\nd e\n' >"$work/probe"
probe=$(python3 "$work/scc.py" "$work/probe")
[ "$probe" = "a b c" ] && ok "the circle search finds a -> b -> c -> a only" ||
    bad "circle probe: '$probe', expected 'a b c'"
finish
