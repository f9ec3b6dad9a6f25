#!/usr/bin/env bash
# Try the newest releases before users meet them.
#
# Builds a fresh virtualenv with the newest release of everything in the `latest` set: what
# `pip install -e '.[all,dev]'` resolves today within pyproject.toml's ranges, with NO constraints
# (what a newcomer gets without `-c constraints/latest.txt`). Writes the versions it resolved as a
# constraints file, prints what moved against constraints/latest.txt, then runs ruff, mypy and pytest
# on that environment exactly as scripts/test.sh does. Exit status: the suite's (0 = the newest
# releases pass; adopt the file).
#
#   scripts/refresh-latest.sh [pytest args...]      e.g.  scripts/refresh-latest.sh -m "not slow"
#
#   RK_NEXT_VENV  the virtualenv to build, removed and rebuilt every time (default .venv-next)
#   RK_NEXT_OUT   the constraints file written (default constraints/latest-next.txt); give
#                 constraints/latest.txt to refresh the tested set in place. constraints/hermes.txt is
#                 never written: Hermes's own pins decide that set.
#   RK_WORKERS    pytest-xdist workers (default auto; 0 = one process)
#   PYTHON        the interpreter the virtualenv is made from (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/suite-lib.sh

PYTHON=${PYTHON:-python3}
VENV=${RK_NEXT_VENV:-.venv-next}
OUT=${RK_NEXT_OUT:-constraints/latest-next.txt}
WORKERS=${RK_WORKERS:-auto}
KEEP_GOING=1  # every step runs, so one failure does not hide the others

case "$(realpath -m "$OUT")" in
    "$(realpath -m constraints/hermes.txt)")
        echo "refresh-latest: $OUT is the hermes set; it follows hermes-agent's pins, not the newest releases" >&2
        exit 2 ;;
esac

echo "== building $VENV from the newest releases (no constraints)"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e ".[all,dev]"

echo "== writing $OUT"
# Same form as constraints/latest.txt: one lower-cased `name==version` a line, sorted, replaykit itself
# (editable) left out.
"$VENV/bin/python" -m pip freeze --exclude-editable \
    | grep -E '^[A-Za-z0-9._-]+==' \
    | awk -F'==' '{ printf "%s==%s\n", tolower($1), $2 }' \
    | LC_ALL=C sort -t= -k1,1 > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"

if [ "$(realpath -m "$OUT")" != "$(realpath -m constraints/latest.txt)" ]; then
    echo "== changes against constraints/latest.txt"
    "$VENV/bin/python" - constraints/latest.txt "$OUT" <<'EOF'
import re
import sys


def pins(path):
    found = {}
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            found[re.sub(r"[-_.]+", "-", name).lower()] = version
    return found


old, new = pins(sys.argv[1]), pins(sys.argv[2])
moved = [(n, old[n], new[n]) for n in sorted(old.keys() & new.keys()) if old[n] != new[n]]
for name, was, now in moved:
    print(f"   {name}: {was} -> {now}")
for name in sorted(new.keys() - old.keys()):
    print(f"   {name}: new {new[name]}")
for name in sorted(old.keys() - new.keys()):
    print(f"   {name}: no longer installed (was {old[name]})")
print(f"   {len(moved)} moved, {len(new.keys() - old.keys())} new, {len(old.keys() - new.keys())} gone")
EOF
fi

status=0
run_suite next "$VENV" "$@" || status=1
if [ $status = 0 ]; then
    echo "== the newest releases pass: $OUT can replace constraints/latest.txt"
else
    echo "== the newest releases FAIL (above); constraints/latest.txt is unchanged unless RK_NEXT_OUT named it"
fi
exit $status
