#!/usr/bin/env bash
# Set up both test environments from the package registries and run the whole suite in each.
#
#   hermes: replaykit beside hermes-agent==0.19.0 (its pins decide openai / pydantic / pydantic-ai)
#   latest: replaykit with the newest PydanticAI, openai and LangGraph releases as last tested
#           (constraints/latest.txt; scripts/refresh-latest.sh tries the releases out since)
#
# Environments live in .venv-hermes and .venv-latest (re-used when present; RK_FRESH=1 rebuilds).
# Versions are pinned by constraints/<env>.txt, the exact sets this suite was run with.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/suite-lib.sh

PYTHON=${PYTHON:-python3}
ENVS=${RK_ENVS:-"hermes latest"}
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
    if [ "${RK_FRESH:-0}" = 1 ]; then rm -rf "$venv"; fi
    if [ ! -x "$venv/bin/python" ]; then
        echo "== creating $venv"
        "$PYTHON" -m venv "$venv"
        "$venv/bin/python" -m pip install -q --upgrade pip
    fi
    echo "== installing replaykit[$extras] into $venv (constraints/$name.txt)"
    "$venv/bin/python" -m pip install -q -c "constraints/$name.txt" -e ".[$extras]"
}

ensure_browser
for env in $ENVS; do
    case $env in
        hermes) setup_env hermes "hermes,all,dev" ;;
        latest) setup_env latest "all,dev" ;;
        *) echo "unknown environment $env" >&2; exit 2 ;;
    esac
done
status=0
for env in $ENVS; do
    run_suite "$env" ".venv-$env" "$@" || status=1
done
exit $status
