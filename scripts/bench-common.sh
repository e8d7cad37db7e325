# Sourced by the benchmark scripts (scripts/s3-bench, scripts/webdav-bench, scripts/local-bench):
# installing what they need, running each measured command so that stopping the script stops it
# too, and the machine's load beside every figure (the machine is shared: a figure taken while
# others build is noisy, and says so).
#
# The sourcing script sets `me` (its name, for messages) and calls bench_stop_child from its
# EXIT trap, with INT and TERM trapped to exit, so that a stopped run ends the command it was
# measuring (and whatever that started) before it stops its servers.

bench_die() {
    echo "$me: $*" >&2
    exit 1
}

# bench_need COMMAND:PACKAGE...: installs with apt-get (as root) the Debian packages of the
# commands that are missing, or stops saying what to install.
bench_need() {
    local pair command missing=()
    for pair in "$@"; do
        command=${pair%%:*}
        # apache2 and the like are in /usr/sbin, which a non-root PATH may lack.
        command -v "$command" >/dev/null 2>&1 || [ -x "/usr/sbin/$command" ] || missing+=("${pair#*:}")
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    [ "$(id -u)" -eq 0 ] || bench_die "missing packages: ${missing[*]} (as root: apt-get install -y ${missing[*]})"
    echo "== installing ${missing[*]}" >&2
    # Stale package lists make install fail; update only when there is something to install.
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The one-minute load average now.
bench_load() { cut -d' ' -f1 /proc/loadavg; }

# Whether a load average is more than the machine's cores: the figure taken then is noisy.
bench_busy() { awk -v l="$1" -v n="$(nproc)" 'BEGIN { exit !(l > n) }'; }

# The process group of the command being measured, while one runs.
bench_child=

# bench_spawn COMMAND...: runs COMMAND in a session (and process group) of its own and waits
# for it; its exit status. In the background with `wait`, not in the foreground: bash runs a
# trap only after a foreground command ends, and a first sync can take an hour.
bench_spawn() {
    local status=0
    setsid "$@" </dev/null &
    bench_child=$!
    wait "$bench_child" || status=$?
    bench_child=
    return "$status"
}

# For the EXIT trap: stops the command being measured, and all it started, by its process
# group id: TERM, then KILL after 5 s.
bench_stop_child() {
    local group=$bench_child i
    [ -n "$group" ] || return 0
    bench_child=
    kill -TERM -- "-$group" 2>/dev/null || return 0
    for ((i = 0; i < 50; i++)); do
        kill -0 -- "-$group" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL -- "-$group" 2>/dev/null || true
}

# The CPU seconds the whole machine has spent busy (all cores, every process) since boot.
bench_machine_cpu() {
    awk -v hz="$(getconf CLK_TCK)" '/^cpu / { printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz }' /proc/stat
}

# bench_measure OUT COMMAND...: one run of COMMAND under GNU time (output in OUT.log); writes
# to OUT one line: wall seconds, peak RSS in KiB, user and system CPU seconds, the load
# average before and after, and the CPU seconds the whole machine spent during the run (the
# load average counts the benchmark's own processes too: the machine's CPU less the
# command's, and less its servers', is what others took from it). Stops the script if
# COMMAND fails. The wall time is bash's clock
# around it, in microseconds (GNU time's %e has 10 ms steps, as long as a whole no-change
# pass); it includes starting GNU time itself, a millisecond or so, alike for every tool.
bench_measure() {
    local out=$1 before after start end cpu_before
    shift
    before=$(bench_load)
    cpu_before=$(bench_machine_cpu)
    start=$EPOCHREALTIME
    bench_spawn /usr/bin/time -f '%M %U %S' -o "$out.time" "$@" >"$out.log" 2>&1 ||
        { tail -n 20 "$out.log" >&2; bench_die "failed: $*"; }
    end=$EPOCHREALTIME
    after=$(bench_load)
    # GNU time prints "Command exited with non-zero status" lines first when there are any.
    echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }') $(tail -n 1 "$out.time") $before $after" \
        "$(awk -v a="$cpu_before" -v b="$(bench_machine_cpu)" 'BEGIN { printf "%.2f", b - a }')" >"$out"
}

# bench_field OUT N: field N of a bench_measure result (1 wall s, 2 peak KiB, 3 user s,
# 4 system s, 5 load before, 6 load after, 7 the machine's CPU s during it).
bench_field() { awk -v n="$2" '{ print $n }' "$1"; }

# bench_median OUT RUNS PREPARE COMMAND...: RUNS runs of bench_measure into OUT-1..OUT-RUNS,
# each after the command PREPARE (a function or command name, untimed; "" for none); OUT gets
# the median wall time with that run's other fields, and the largest peak RSS of all runs and
# the highest load before and after any run in place of that run's.
bench_median() {
    local out=$1 runs=$2 prepare=$3 i
    shift 3
    for ((i = 1; i <= runs; i++)); do
        [ -z "$prepare" ] || "$prepare"
        bench_measure "$out-$i" "$@"
    done
    bench_combine "$out" "$runs"
}

# bench_combine OUT RUNS: OUT from the bench_measure results OUT-1..OUT-RUNS, as bench_median
# says (for runs measured some other way, say alternating with a peer's).
bench_combine() {
    local out=$1 runs=$2 i
    for ((i = 1; i <= runs; i++)); do cat "$out-$i"; done | sort -n -k1,1 | awk -v n="$runs" '
        { line[NR] = $0; if ($2 > rss) rss = $2; if ($5 > l1) l1 = $5; if ($6 > l2) l2 = $6 }
        END { split(line[int((n + 1) / 2)], f, " "); print f[1], rss, f[3], f[4], l1, l2, f[7] }' >"$out"
}

# bench_docs PATH: sets `docs` to the release `docs` to measure: PATH when given (built
# beforehand, say under a lock shared with others building on the machine), else built here
# (in the foreground of this shell, so that stopping the script stops the build) as
# docs/documentkit-sync@.service installs it: release, the Swift runtime and Foundation linked
# in (`--static-swift-stdlib`, in .build/installed), as rclone's binary carries its runtime.
bench_docs() {
    local given=$1 log
    if [ -n "$given" ]; then
        [ -x "$given" ] || bench_die "--docs $given is not an executable"
        docs=$given
        return
    fi
    if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
        export PATH="/opt/swift/usr/bin:$PATH"
    fi
    command -v swift >/dev/null || bench_die "no Swift toolchain on PATH (nor in /opt/swift/usr/bin)"
    echo "== release build of docs" >&2
    log=$(mktemp "${TMPDIR:-/tmp}/bench-build.XXXXXX")
    local build=(swift build -c release --static-swift-stdlib --scratch-path .build/installed)
    bench_spawn "${build[@]}" --product docs >"$log" 2>&1 ||
        { tail -n 30 "$log" >&2; rm -f "$log"; bench_die "${build[*]} --product docs failed"; }
    rm -f "$log"
    docs="$("${build[@]}" --show-bin-path)/docs"
    [ -x "$docs" ] || bench_die "no $docs after the build"
}

# bench_seconds S: a duration for people: "46.2 ms", "1.35 s".
bench_seconds() {
    awk -v s="$1" 'BEGIN { if (s < 1) printf "%.1f ms", s * 1000; else printf "%.2f s", s }'
}

# bench_ratio A B: A / B to two decimals ("-" when B is 0).
bench_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

# bench_verdict CONDITION: "met" when the awk CONDITION holds, else "MISSED" ("-" when it
# compares a ratio that could not be taken).
bench_verdict() {
    case $1 in -\ *) echo - ;; *) awk "BEGIN { print ($1) ? \"met\" : \"MISSED\" }" ;; esac
}

# bench_machine: one line naming the machine, its cores and the load now.
bench_machine() {
    printf '%s, %s cores (shared with other engineers: timing is noisy), load average %s\n' \
        "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')" "$(nproc)" \
        "$(cut -d' ' -f1-3 /proc/loadavg)"
}

# The CPU seconds (user + system) the processes with these pids have used so far.
bench_cpu_of() {
    local pid total=0 ticks
    ticks=$(getconf CLK_TCK)
    for pid in "$@"; do
        [ -r "/proc/$pid/stat" ] || continue
        total=$((total + $(sed 's/^.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }')))
    done
    awk -v t="$total" -v hz="$ticks" 'BEGIN { printf "%.2f\n", t / hz }'
}
