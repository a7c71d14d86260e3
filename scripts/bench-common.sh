# Helpers the wrk benchmarks share (sourced by bench-http.sh and bench-shared.sh).

CLK_TCK=$(getconf CLK_TCK)

# A process's CPU time so far, in clock ticks (utime + stime from /proc/PID/stat).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# wrk latency like 612.00us / 1.23ms / 1.01s -> microseconds
to_us() {
  awk -v v="$1" 'BEGIN {
    n = v + 0
    if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000; else if (v ~ /s$/) print n * 1000000; else print n }'
}

# The median of numbers on standard input, one per line.
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# CPU microseconds per request from a tick difference and a request count.
cpu_us_per_request() { awk -v t="$1" -v hz="$CLK_TCK" -v n="$2" 'BEGIN {printf "%.2f", t / hz / n * 1e6}'; }
