#!/usr/bin/env bash
# Measures the README's two commands as a newcomer meets them: on a fresh
# clone, with an empty target directory, on this machine. Prints, for each
# command, its wall and CPU seconds (user + system, which a busy machine
# disturbs less than wall time), the load average before and after, and
# target/'s size after it; then the machine, and the ten slowest test
# binaries. The README's "Measured" block is this output, pasted.
#
#   scripts/measure-readme.sh [--only tests|main] [--keep] [REF]
#
# REF is the commit to measure (default HEAD of this repository); only
# committed work is measured. --keep leaves the clone (and its target/) in
# place and prints its path. Set SYMFONIC_EVALS_FRAMEWORK_VENV as CI does to
# have the framework desks judged instead of skipped.
set -euo pipefail

only=all
keep=0
ref=HEAD
while [ $# -gt 0 ]; do
    case "$1" in
        --only) only="$2"; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) ref="$1"; shift ;;
    esac
done
case "$only" in all|tests|main) ;; *) echo "--only takes tests or main" >&2; exit 2 ;; esac

repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(mktemp -d "${TMPDIR:-/tmp}/measure-readme.XXXXXX")
if [ "$keep" = 0 ]; then trap 'rm -rf "$work"' EXIT; fi
clone="$work/clone"
git clone --quiet "$repo" "$clone"
git -C "$clone" checkout --quiet --detach "$(git -C "$repo" rev-parse "$ref")"
cd "$clone"
# A fresh measurement: no shared target directory, no compiler cache.
unset CARGO_TARGET_DIR RUSTC_WRAPPER CARGO_BUILD_TARGET_DIR

load() { cut -d' ' -f1-3 /proc/loadavg; }
size() { du -sh target 2>/dev/null | cut -f1; }

# step LABEL COMMAND...: runs the command with its output in $work and
# prints one line of figures; a failed command is reported with the end of
# its output, and fails the measurement once every step has run.
failed=0
step() {
    local label="$1"; shift
    local before log="$work/$label.log" timing="$work/$label.time"
    before=$(load)
    TIMEFORMAT='%R %U %S'
    if ! { time "$@" >"$log" 2>&1; } 2>"$timing"; then
        echo "$label: '$*' failed; its output ends:" >&2
        grep -E '^(test .* FAILED|failures:|    [a-z_:]+$|error: )' "$log" | tail -n 20 >&2 || true
        failed=1
    fi
    read -r wall user sys <"$timing"
    total_wall=$(awk "BEGIN { print $total_wall + $wall }")
    total_cpu=$(awk "BEGIN { print $total_cpu + $user + $sys }")
    printf '%-11s %5.0f s wall %5.0f s CPU (user %.0f + sys %.0f)  load %s -> %s  target/ %s\n' \
        "$label" "$wall" "$(awk "BEGIN { print $user + $sys }")" "$user" "$sys" "$before" "$(load)" "$(size)"
}

# total LABEL: the steps since the last total, together.
total_wall=0
total_cpu=0
total() {
    printf '%-11s %5.0f s wall %5.0f s CPU\n' "$1" "$total_wall" "$total_cpu"
    total_wall=0
    total_cpu=0
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)"
echo "# $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)," \
    "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1); $(rustc --version)"
if [ -n "${SYMFONIC_EVALS_FRAMEWORK_VENV:-}" ]; then
    echo "# framework desks: judged (SYMFONIC_EVALS_FRAMEWORK_VENV set)"
else
    echo "# framework desks: skipped (SYMFONIC_EVALS_FRAMEWORK_VENV unset)"
fi
# A fresh clone has no typescript/node_modules: the TypeScript desks are
# skipped by both commands, as on a newcomer's machine before `npm ci`.
echo "# TypeScript desks: skipped (a fresh clone has no typescript/node_modules)"

if [ "$only" != main ]; then
    echo "cargo test --workspace (built, then run, as CI times it)"
    # --no-fail-fast: a failing binary does not stop the rest, so the run
    # is measured whole (and the failures counted) either way.
    step test-build cargo test --workspace --no-run
    step test-run cargo test --workspace --no-fail-fast
    total "together"
    awk '/^test result:/ {
            for (i = 1; i <= NF; i++) {
                if ($(i + 1) ~ /^passed/) p += $i
                if ($(i + 1) ~ /^failed/) f += $i
                if ($(i + 1) ~ /^ignored/) g += $i
            }
        }
        END { printf "tests: %d passed, %d failed, %d ignored\n", p, f, g }' "$work/test-run.log"
fi

if [ "$only" != tests ]; then
    echo "cargo run --release -p helpdesk (built, then run)"
    step main-build cargo build --release -p helpdesk
    step main-run cargo run --release -p helpdesk
    total "together"
fi

if [ "$only" != main ]; then
    echo "slowest test binaries (wall seconds of their tests, as libtest reports them)"
    # "Running unittests src/lib.rs (target/debug/deps/crate-hash)": the
    # source and the binary's name without its hash.
    awk '/^ *Running / { bin = $NF; gsub(/[()]/, "", bin); sub(/.*\//, "", bin); sub(/-[0-9a-f]+$/, "", bin)
                         name = ($2 == "unittests" ? $3 : $2) " [" bin "]"; next }
         /^ *Doc-tests / { name = "doctests " $2; next }
         /^test result:/ && name != "" {
            for (i = 1; i <= NF; i++) if ($i == "in") { t = $(i + 1); sub(/s$/, "", t) }
            printf "%8.1f s  %s\n", t, name; name = ""
         }' "$work/test-run.log" | sort -rn | head -n 10
fi

if [ "$keep" = 1 ]; then echo "# kept: $clone (logs in $work)"; fi
exit "$failed"
