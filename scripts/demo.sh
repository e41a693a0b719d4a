#!/bin/sh
# Starts the bundled labelled demo service, profiles it for a few seconds and
# prints the CPU share per label value with the hottest functions under each.
set -eu
OUTPUT=${OUTPUT:-.output}
labelprof=$OUTPUT/labelprof
demo=$OUTPUT/workloads/demo

if [ "$(id -u)" -ne 0 ]; then
	echo "make demo: labelprof loads a BPF program and needs root (try: sudo make demo)" >&2
	exit 1
fi

"$demo" -d 30 >/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT INT TERM
sleep 1

echo "Profiling the demo service (pid $pid) for 5 seconds at 199 Hz..."
"$labelprof" record -p "$pid" -F 199 -d 5 --format report
"$labelprof" record -p "$pid" -F 199 -d 2 --format folded -o "$OUTPUT/demo.folded" 2>/dev/null
echo
echo "Folded stacks with labels (flamegraph.pl input): $OUTPUT/demo.folded"
echo "  e.g. $labelprof record -p PID -d 5 --format folded"
