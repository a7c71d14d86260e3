# Helpers the wrk benchmarks share (sourced by bench-http.sh, bench-shared.sh and bench-instructions.sh).

CLK_TCK=$(getconf CLK_TCK)

# The CPU time so far of a process, or of several (PIDs separated by commas: a server's master and workers), in clock
# ticks (utime + stime from /proc/PID/stat); a process that has ended counts nothing.
cpu_ticks() {
  local pid total=0
  for pid in ${1//,/ }; do
    [[ -r /proc/$pid/stat ]] && total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
  done
  echo "$total"
}

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

# keys_script FILE KEYS: writes a wrk script that asks for the KEYS users' subscriptions in turn, one per request (the
# L1-miss benchmarks' key set: /v1/users/u0 to u<KEYS-1>).
keys_script() {
  cat >"$1" <<EOF
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/v1/users/u" .. (n % $2) .. "/subscription")
end
EOF
}
