# Shared by scripts/test.sh and scripts/refresh-latest.sh (sourced, not run): one way to run the suite.

# run_suite NAME VENV [pytest args...]: ruff, mypy (unless LINT=0) and pytest in VENV; RK_ENV=NAME tells the tests which
# environment they are in. Uses $WORKERS (pytest-xdist workers). Returns 1 at the first step that fails,
# or, with KEEP_GOING=1, runs every step and returns 1 if any failed (refresh-latest: a new ruff rule
# must not hide what the new releases do to the tests).
run_suite() {
    local name=$1 venv=$2 failed=0
    shift 2
    # Explicit "|| ...": errexit does not apply inside a function called from an `||` list.
    if [ "${LINT:-1}" = 1 ]; then  # LINT=0: pytest only (an environment that differs only in Hermes)
        echo "== [$name] ruff"
        "$venv/bin/python" -m ruff check replaykit tests bench || { failed=1; [ "${KEEP_GOING:-0}" = 1 ] || return 1; }
        echo "== [$name] mypy"
        "$venv/bin/python" -m mypy replaykit || { failed=1; [ "${KEEP_GOING:-0}" = 1 ] || return 1; }
    fi
    echo "== [$name] pytest ($WORKERS workers)"
    RK_ENV=$name "$venv/bin/python" -m pytest -q -p no:cacheprovider -n "$WORKERS" --dist worksteal "$@" || failed=1
    return $failed
}
