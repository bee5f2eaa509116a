# Run test commands in two lanes side by side (sourced by scripts/test.sh and .ci/run).
#
#   run_lanes "CMD" "CMD" ... -- "CMD" ...
#
# The commands before `--` run one after another in the first lane, those after it in the
# second; each is a shell command line (eval'd, so it may quote a pytest -m expression). Every
# command runs, whatever the others do; run_lanes fails if any failed. A part keeps only about
# 1.2 of two cores busy, so two lanes finish the whole in about three quarters of the time
# (the CI run of 2026-11-28: the Python 3.11 parts 1,710 s against 2,280 s one after another;
# the 3.10 and 3.12 legs 8 minutes together against 13).
#
# GLUON_HUB_TEST_LANES=1 runs every command in one lane, its output streamed as it comes; the
# default is 2 where there are 2 cores and 20 GiB of memory (the parts' order keeps the two
# lanes' largest apart: scripts/test.sh), else 1. With two lanes each command's output is
# held back in a file and printed whole when it ends, so the two lanes' lines never
# interleave, and OpenMP gets one thread per lane unless OMP_NUM_THREADS is set (two lanes of
# two threads each on two cores would keep preempting each other's spinning workers).

default_lanes() {
    local memory_kib
    memory_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
    if [ "$(nproc 2>/dev/null || echo 1)" -ge 2 ] && [ "${memory_kib:-0}" -ge $((20 * 1024 * 1024)) ]; then
        echo 2
    else
        echo 1
    fi
}

_run_lane() {
    # _run_lane NAME CMD...: each command's output to a file, printed whole under a lock
    local name=$1 lock=$2 status=0 command log started rc
    shift 2
    log=$(mktemp)
    for command in "$@"; do
        flock "$lock" echo "test [$name lane]: $command (started)"
        started=$(date +%s)
        rc=0
        eval "$command" > "$log" 2>&1 || rc=$?
        [ "$rc" -eq 0 ] || status=1
        flock "$lock" sh -c 'echo "test [$1 lane]: $2 (exit $3 after $4 s)"; cat "$5"' _ \
            "$name" "$command" "$rc" $(( $(date +%s) - started )) "$log"
    done
    rm -f "$log"
    return "$status"
}

run_lanes() {
    local first=() second=() lanes status=0 lock tmp_first tmp_second pid_first pid_second
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do first+=("$1"); shift; done
    [ "$#" -gt 0 ] && shift
    second=("$@")
    lanes=${GLUON_HUB_TEST_LANES:-$(default_lanes)}
    if [ "$lanes" = 1 ]; then
        local command
        for command in "${first[@]}" "${second[@]}"; do
            echo "test: $command"
            eval "$command" || status=1
        done
        return "$status"
    fi
    if [ "$lanes" != 2 ]; then
        echo "test: GLUON_HUB_TEST_LANES is '$lanes'; set it to 1 or 2" >&2
        return 2
    fi
    lock=$(mktemp)
    # each lane its own temporary folder, so pytest's numbered folders never meet
    tmp_first=$(mktemp -d) tmp_second=$(mktemp -d)
    echo "test: two lanes (GLUON_HUB_TEST_LANES=1 runs one); each part's output follows its end"
    OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} TMPDIR=$tmp_first _run_lane first "$lock" "${first[@]}" &
    pid_first=$!
    OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} TMPDIR=$tmp_second _run_lane second "$lock" "${second[@]}" &
    pid_second=$!
    wait "$pid_first" || status=1
    wait "$pid_second" || status=1
    rm -rf "$lock" "$tmp_first" "$tmp_second"
    return "$status"
}
