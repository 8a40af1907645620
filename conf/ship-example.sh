#!/bin/sh
# ship-example.sh: an on_finish program for perfspilld. It uploads a
# finished trace file, the JIT maps the daemon copied beside it
# (FILE.perf-maps.tar, when its processes had any) and its manifest, the
# manifest last: a store that sees FILE.json may take the others as whole.
#
# perfspilld runs it as: ship-example.sh FILE MANIFEST, with the facts of
# the file in PERFSPILL_* (perfspilld.json(5)). A non-zero exit makes
# perfspilld try again later (on_finish_tries, on_finish_retry), and keeps
# the file from retention meanwhile.
#
# It runs as the user perfspill-handoff, which reads the files and
# writes nothing of the machine's: under systemd in a unit of its own,
# perfspill-handoff@.service (its output in the journal; a drop-in gives
# it credentials), otherwise as perfspilld's child (its output in the
# daemon's log).
#
# Set one of these here (perfspilld passes only PATH and PERFSPILL_*; the
# unit adds systemd's usual variables), or in a wrapper that exports them
# and runs this script:
#   SHIP_URL    an HTTP(S) prefix; each file is PUT (curl -T) to
#               SHIP_URL/HOST/NAME (e.g. https://store.example/perf)
#   SHIP_RSYNC  an rsync destination host:dir/ (rsync over ssh); the files
#               go to dir/HOST/
SHIP_URL=${SHIP_URL:-}
SHIP_RSYNC=${SHIP_RSYNC:-}
# seconds one transfer may take; perfspilld's on_finish_timeout bounds
# the whole run
SHIP_TIMEOUT=${SHIP_TIMEOUT:-300}
# extra curl options, e.g. "--cacert /etc/ssl/store.pem" or "-u user:pass"
SHIP_CURL_OPTS=${SHIP_CURL_OPTS:-}

set -eu

if [ $# -lt 1 ]; then
	echo "usage: $0 FILE [MANIFEST]" >&2
	exit 2
fi
file=$1
manifest=${2:-}
host=${PERFSPILL_HOST:-$(hostname)}
name=$(basename "$file")
# the JIT maps, when its processes had any
maps=
if [ -f "$file.perf-maps.tar" ]; then
	maps=$file.perf-maps.tar
fi

if [ -n "$SHIP_URL" ]; then
	# ${manifest:+...}: no word for an empty manifest, one for a path
	# with spaces
	for f in "$file" ${maps:+"$maps"} ${manifest:+"$manifest"}; do
		# --fail: an HTTP error is an exit status, so perfspilld retries
		# shellcheck disable=SC2086
		curl --fail --silent --show-error --max-time "$SHIP_TIMEOUT" \
		    $SHIP_CURL_OPTS -T "$f" "$SHIP_URL/$host/$(basename "$f")"
	done
elif [ -n "$SHIP_RSYNC" ]; then
	# --partial-dir: an interrupted transfer never shows as a whole file
	rsync --timeout="$SHIP_TIMEOUT" --partial-dir=.rsync-partial \
	    --mkpath "$file" ${maps:+"$maps"} "${SHIP_RSYNC%/}/$host/"
	if [ -n "$manifest" ]; then
		rsync --timeout="$SHIP_TIMEOUT" "$manifest" "${SHIP_RSYNC%/}/$host/"
	fi
else
	echo "ship-example.sh: set SHIP_URL or SHIP_RSYNC; $name not shipped" >&2
	exit 1
fi
