#!/bin/sh
#
# config-check: perfspilld -n against expected normalised configs, the way
# OpenBSD's regress tests parse.y. For every DIR/NAME.json:
#   - with DIR/NAME.err: perfspilld must exit non-zero, print nothing on
#     stdout, and print NAME.err on stderr;
#   - otherwise: it must exit 0, print DIR/NAME.out exactly on stdout and
#     nothing on stderr.
# The daemon runs inside DIR with the bare file name, so that messages
# naming the file do not depend on where the tree is checked out.
#
# usage: config-check.sh PERFSPILLD DIR

set -u

if [ $# -ne 2 ]; then
	echo "usage: config-check.sh PERFSPILLD DIR" >&2
	exit 2
fi
daemon=$1
dir=$2
if [ ! -x "$daemon" ]; then
	echo "config-check: $daemon: not built" >&2
	exit 1
fi
cd "$dir" || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfspill-config-check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0

fail() {
	echo "FAIL $1: $2"
	failed=$((failed + 1))
}

for f in *.json; do
	name=${f%.json}
	"$daemon" -n -c "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	# The log prefix depends on whether stderr is a terminal or the
	# journal: <N> when it is not, "perfspilld: " when it is. Compare
	# the messages only.
	sed -e 's/^<[0-9]>//' -e 's/^perfspilld: //' "$tmp/err" >"$tmp/err.msg"

	if [ -f "$name.err" ]; then
		if [ $rc -eq 0 ]; then
			fail "$f" "accepted, expected a refusal"
		elif [ -s "$tmp/out" ]; then
			fail "$f" "refused, but printed a config"
		elif ! diff -u "$name.err" "$tmp/err.msg"; then
			fail "$f" "stderr differs from $name.err"
		else
			passed=$((passed + 1))
		fi
	elif [ -f "$name.out" ]; then
		if [ $rc -ne 0 ]; then
			fail "$f" "exit $rc: $(cat "$tmp/err.msg")"
		elif ! diff -u "$name.out" "$tmp/out"; then
			fail "$f" "output differs from $name.out"
		elif [ -s "$tmp/err" ]; then
			fail "$f" "wrote to stderr: $(cat "$tmp/err.msg")"
		else
			passed=$((passed + 1))
		fi
	else
		fail "$f" "neither $name.out nor $name.err"
	fi
done

# an expectation without its input is a test that silently stopped running
for f in *.out *.err; do
	[ -f "$f" ] || continue
	[ -f "${f%.*}.json" ] || fail "$f" "no ${f%.*}.json"
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
