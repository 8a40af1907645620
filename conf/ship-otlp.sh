#!/bin/sh
# ship-otlp.sh: an on_finish program for perfspilld that sends the
# profile of each finished trace file to an OpenTelemetry Collector (or
# any receiver of OTLP/HTTP profiles), as the OpenTelemetry eBPF profiler
# sends its own:
#
#   POST SHIP_OTLP/v1development/profiles
#        Content-Type: application/x-protobuf, Content-Encoding: gzip
#   body: an ExportProfilesServiceRequest (perfspill-flame --otlp): the
#         host as the resource (host.name, host.id, host.arch, os.*), a
#         profile per event, each sample's stack, value and time, and its
#         process.pid, thread.id, process.executable.name, cgroup and
#         container.id
#
# The profiles signal is alpha: the request follows opentelemetry-proto
# at the commit docs/flame.md names, which a Collector of the same
# generation reads (its otlpreceiver with the profiles feature gate on).
# A file of the off-CPU session (perfspillctl start --off-cpu: session
# offcpu in its manifest, or any session whose one event is
# sched:sched_switch) is sent as off-CPU time (--off-cpu).
#
# perfspilld runs it as: ship-otlp.sh FILE MANIFEST, with the facts of
# the file in PERFSPILL_* (perfspilld.json(5)). A non-zero exit (the
# Collector refused it, or could not be reached) makes perfspilld try
# again later (on_finish_tries, on_finish_retry), and keeps the file from
# retention meanwhile. Set these here (perfspilld passes only PATH and
# PERFSPILL_*), or in a wrapper that exports them:
#   SHIP_OTLP  the Collector's OTLP/HTTP base URL, e.g.
#              http://otel-collector:4318
SHIP_OTLP=${SHIP_OTLP:-}
# seconds the upload may take; perfspilld's on_finish_timeout bounds the
# whole run, the encoding included
SHIP_TIMEOUT=${SHIP_TIMEOUT:-300}
# extra curl options, e.g. "-H Authorization:Bearer..." or "--cacert CA"
SHIP_CURL_OPTS=${SHIP_CURL_OPTS:-}
# the encoding tool
PERFSPILL_FLAME=${PERFSPILL_FLAME:-perfspill-flame}

set -eu

if [ $# -lt 1 ]; then
	echo "usage: $0 FILE [MANIFEST]" >&2
	exit 2
fi
file=$1
manifest=${2:-$1.json}
if [ -z "$SHIP_OTLP" ]; then
	echo "ship-otlp.sh: set SHIP_OTLP; $(basename "$file") not shipped" >&2
	exit 1
fi

# one key per line in a manifest: "key": value,
field() {
	[ -r "$manifest" ] || return 0
	sed -n "s/^ *\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" \
	    "$manifest" | head -n 1
}
if [ -r "$manifest" ] && [ -z "$(field first_sample_utc_approx)" ]; then
	echo "ship-otlp.sh: $(basename "$file") holds no samples; nothing" \
	    "to ship" >&2
	exit 0
fi
# the events of the file's settings, one per line
events() {
	[ -r "$manifest" ] || return 0
	awk '/^ *"events": \[/ { on = 1; next }
	    on && /\]/ { exit }
	    on { gsub(/[ ",]/, ""); print }' "$manifest"
}
# an off-CPU session (start --off-cpu, whatever --session named it) has
# every sched_switch as its one event: its time is shipped, not counts
offcpu=
if [ "$(field session)" = offcpu ] ||
    [ "$(events)" = sched:sched_switch ]; then
	offcpu=--off-cpu
fi

out=$(mktemp "${TMPDIR:-/tmp}/ship-otlp.XXXXXX")
trap 'rm -f "$out" "$out.gz"' EXIT
# the whole request first: a failed read never uploads half of one
# shellcheck disable=SC2086
"$PERFSPILL_FLAME" -q $offcpu --otlp "$out" "$file"
gzip -c "$out" >"$out.gz"
# --fail: an HTTP error is an exit status, so perfspilld retries
# shellcheck disable=SC2086
curl --fail --silent --show-error --max-time "$SHIP_TIMEOUT" \
    $SHIP_CURL_OPTS -X POST -o /dev/null \
    -H "Content-Type: application/x-protobuf" -H "Content-Encoding: gzip" \
    --data-binary "@$out.gz" "${SHIP_OTLP%/}/v1development/profiles"
