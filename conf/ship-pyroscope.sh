#!/bin/sh
# ship-pyroscope.sh: an on_finish program for perfspilld that sends the
# profile of each finished trace file to the /ingest endpoint of Pyroscope
# (or a store that takes the same requests), as folded stacks:
#
#   POST SHIP_PYROSCOPE/ingest?name=APP{host=HOST}&from=FIRST&until=LAST
#        &format=folded&sampleRate=HZ&spyName=perfspill&units=samples
#        &aggregationType=sum
#   body: "comm;frame;frame COUNT" lines
#
# or, with SHIP_FORMAT=pprof, as pprof's profile.proto (perfspill-flame
# -P: addresses, mappings with build-ids, labels comm, pid, event, cgroup),
# a multipart form as Pyroscope's own clients send it:
#
#   POST SHIP_PYROSCOPE/ingest?name=APP{host=HOST}&from=FIRST&until=LAST
#        &format=pprof&spyName=perfspill
#   body: multipart/form-data, the gzipped profile in the part "profile"
#
# FIRST and LAST are the file's first and last sample (epoch seconds, the
# last rounded up) and HZ its sampling frequency, all from its manifest.
# perfspill-flame folds the file and keeps the result as NAME.data.folded
# beside it (retention removes it with the file), so a later flame graph
# over the same files does not run perf on them again.
#
# perfspilld runs it as: ship-pyroscope.sh FILE MANIFEST, with the facts
# of the file in PERFSPILL_* (perfspilld.json(5)). A non-zero exit makes
# perfspilld try again later (on_finish_tries, on_finish_retry), and keeps
# the file from retention meanwhile. Set these here (perfspilld passes
# only PATH and PERFSPILL_*), or in a wrapper that exports them:
#   SHIP_PYROSCOPE  the server's base URL, e.g. http://pyroscope:4040
SHIP_PYROSCOPE=${SHIP_PYROSCOPE:-}
# the application name; the host goes in as a label
SHIP_APP=${SHIP_APP:-perfspill.cpu}
# seconds the upload may take; perfspilld's on_finish_timeout bounds the
# whole run, folding included (about what perf script takes on the file)
SHIP_TIMEOUT=${SHIP_TIMEOUT:-300}
# extra curl options, e.g. "-u user:pass" or "-H X-Scope-OrgID:fleet"
SHIP_CURL_OPTS=${SHIP_CURL_OPTS:-}
# what is sent: folded (the stacks by name) or pprof (the profile)
SHIP_FORMAT=${SHIP_FORMAT:-folded}
# the folding tool
PERFSPILL_FLAME=${PERFSPILL_FLAME:-perfspill-flame}

set -eu

if [ $# -lt 1 ]; then
	echo "usage: $0 FILE [MANIFEST]" >&2
	exit 2
fi
file=$1
manifest=${2:-$1.json}
host=${PERFSPILL_HOST:-$(hostname)}
case $SHIP_FORMAT in
folded|pprof) ;;
*)
	echo "ship-pyroscope.sh: SHIP_FORMAT is folded or pprof, not" \
	    "'$SHIP_FORMAT'" >&2
	exit 2
	;;
esac
if [ -z "$SHIP_PYROSCOPE" ]; then
	echo "ship-pyroscope.sh: set SHIP_PYROSCOPE; $(basename "$file") not" \
	    "shipped" >&2
	exit 1
fi
if [ ! -r "$manifest" ]; then
	echo "ship-pyroscope.sh: no manifest $manifest: the time range is" \
	    "not known" >&2
	exit 1
fi

# one key per line in a manifest: "key": value,
field() {
	sed -n "s/^ *\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" \
	    "$manifest" | head -n 1
}
first=$(field first_sample_utc_approx)
last=$(field last_sample_utc_approx)
if [ -z "$first" ] || [ -z "$last" ]; then
	echo "ship-pyroscope.sh: $(basename "$file") holds no samples;" \
	    "nothing to ship" >&2
	exit 0
fi
from=$(date -u -d "$first" +%s)
until=$(($(date -u -d "$last" +%s) + 1))
hz=$(field freq)
case $hz in
''|0|*[!0-9]*) hz=100 ;;	# recorded with a period: a nominal rate
esac

out=$(mktemp "${TMPDIR:-/tmp}/ship-pyroscope.XXXXXX")
trap 'rm -f "$out"' EXIT
if [ "$SHIP_FORMAT" = pprof ]; then
	# the whole profile first: a failed read never uploads half of one
	"$PERFSPILL_FLAME" -q -P "$out" "$file"
	# shellcheck disable=SC2086
	curl --fail --silent --show-error --max-time "$SHIP_TIMEOUT" \
	    $SHIP_CURL_OPTS -X POST \
	    -F "profile=@$out;type=application/octet-stream;filename=profile.pb.gz" \
	    --url-query "name=$SHIP_APP{host=$host}" \
	    --url-query "from=$from" --url-query "until=$until" \
	    --url-query "format=pprof" --url-query "spyName=perfspill" \
	    "${SHIP_PYROSCOPE%/}/ingest"
	exit
fi
# the whole profile first: a failed fold never uploads half of one
"$PERFSPILL_FLAME" -q -f "$out" "$file"

# --url-query encodes each value; --fail: an HTTP error is an exit status,
# so perfspilld retries
# shellcheck disable=SC2086
curl --fail --silent --show-error --max-time "$SHIP_TIMEOUT" \
    $SHIP_CURL_OPTS -X POST -H "Content-Type: text/plain" \
    --data-binary "@$out" \
    --url-query "name=$SHIP_APP{host=$host}" \
    --url-query "from=$from" --url-query "until=$until" \
    --url-query "format=folded" --url-query "sampleRate=$hz" \
    --url-query "spyName=perfspill" --url-query "units=samples" \
    --url-query "aggregationType=sum" \
    "${SHIP_PYROSCOPE%/}/ingest"
