#!/usr/bin/env bash
# Each framework extra alone: a fresh virtualenv with only that extra
# (under python/constraints.txt), its adapter imported, every example desk
# module that needs only that framework imported, and each example desk
# started through the handshake (hello, then shutdown), as the harness
# starts it, with the model endpoint's variables set to a placeholder key
# and a loopback address nothing answers on (nothing asks a model) and no
# MCP fixture named (the desks then serve their forecasts themselves).
#
# CI installs the four extras together, where one extra's dependencies can
# hide another's missing one; this finds that. Slow (four installs), so it
# is run by hand and is not part of .ci/run:
#
#   bash python/tests/check_extras.sh              # every extra
#   bash python/tests/check_extras.sh pydantic-ai  # the ones named
#
# PYTHON picks the interpreter (python3); CHECK_EXTRAS_DIR keeps the
# virtualenvs there instead of in a temporary directory removed after.
set -euo pipefail
cd "$(dirname "$0")/../.."

python=${PYTHON:-python3}
only=" $* "
work=${CHECK_EXTRAS_DIR:-}
if [ -z "$work" ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

# extra, adapter module, then the example modules that need only it; the
# ones marked "=" are desks, also started through the handshake.
EXTRAS=(
    "langgraph langgraph =examples/langgraph-desk/desk.py =examples/langgraph-desk/procedural.py"
    "openai-agents openai_agents =examples/openai-agents-desk/desk.py =examples/openai-agents-desk/stdio_desk.py examples/openai-agents-desk/forecast_server.py"
    "pydantic-ai pydantic_ai =examples/pydantic-ai-desk/desk.py"
    "google-adk google_adk =examples/google-adk-desk/desk.py"
)

# Imports a module from its file, its directory first on the path, as
# anything but __main__ (so a desk does not serve).
IMPORT='
import importlib.util, os, sys
path = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.dirname(path))
spec = importlib.util.spec_from_file_location("module_under_check", path)
spec.loader.exec_module(importlib.util.module_from_spec(spec))
'

# The first line a desk writes after hello must be ready.
READY='
import json, sys
line = sys.stdin.readline()
message = json.loads(line) if line.strip() else {}
sys.exit(0 if message.get("type") == "ready" else 1)
'

failed=0
check() {
    local extra=$1 adapter=$2
    shift 2
    local venv="$work/$extra"
    echo "== [$extra] a fresh virtualenv with python/[$extra] under python/constraints.txt"
    rm -rf "$venv"
    "$python" -m venv "$venv" || return 1
    "$venv/bin/pip" install --quiet --disable-pip-version-check -c python/constraints.txt "./python[$extra]" || return 1
    echo "   import symfonic_evals_protocol.adapters.$adapter"
    "$venv/bin/python" -c "import symfonic_evals_protocol.adapters.$adapter" || return 1
    local entry path durable hello
    for entry in "$@"; do
        path=${entry#=}
        echo "   import $path"
        "$venv/bin/python" -c "$IMPORT" "$path" || return 1
        if [ "$entry" != "$path" ]; then
            echo "   start $path through the handshake"
            durable=$(mktemp -d "$work/durable.XXXXXX")
            hello="{\"type\": \"hello\", \"protocol_versions\": [1], \"durable_dir\": \"$durable\", \"trial\": 0}"
            printf '%s\n{"type": "shutdown"}\n' "$hello" \
                | env -u MCP_SERVER_URL -u MCP_SERVER_COMMAND -u MCP_STDIO_ADDR OPENAI_API_KEY=sk-placeholder OPENAI_BASE_URL=http://127.0.0.1:9/v1 \
                    "$venv/bin/python" "$path" --durable-dir "$durable" \
                | "$venv/bin/python" -c "$READY" || return 1
        fi
    done
}

for spec in "${EXTRAS[@]}"; do
    read -r -a fields <<<"$spec"
    extra=${fields[0]}
    if [ "$only" != "  " ] && [[ "$only" != *" $extra "* ]]; then
        continue
    fi
    if check "${fields[@]}"; then
        echo "   ok: $extra"
    else
        echo "   FAILED: $extra"
        failed=1
    fi
done
exit "$failed"
