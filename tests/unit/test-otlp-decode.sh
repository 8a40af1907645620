#!/bin/sh
# test-otlp-decode: test-otlp's synthetic request read by Debian's protoc
# against the schema vendored in tests/otlp-proto: every field is where
# the schema says (protoc --decode fails on a wrong wire type), and the
# values come out as written. Skips (77) without protoc.
set -eu
command -v protoc >/dev/null || { echo "protoc not installed"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out" "$out.txt"' EXIT
"$TEST_OTLP" "$out" >/dev/null
protoc -I "$OTLP_PROTO" \
    --decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
    opentelemetry/proto/collector/profiles/v1development/profiles_service.proto \
    <"$out" >"$out.txt"
fail=0
want() {
	n=$(grep -c -- "$1" "$out.txt" || true)
	if [ "$n" != "$2" ]; then
		echo "'$1': $n lines, not $2"
		fail=1
	fi
}
want 'resource_profiles {' 2
want '    profiles {' 3
want 'string_value: "a"' 1
want 'int_value: 0' 1
want 'int_value: 7' 1
want 'values: 1000' 1
want 'values: 2000' 1
want 'timestamps_unix_nano: 1764856800100000000' 1
want 'stack_table {' 3
want 'location_indices:' 5
want 'trace_id: "\\000' 1
want 'mapping_table {' 2
want 'string_value: "0123456789abcdef0123456789abcdef01234567"' 1
want 'duration_nano: 200000000' 1
# a comm's bytes that are no UTF-8 arrive as U+FFFD (protoc refuses the
# whole request otherwise)
want 'string_value: "\\357\\277\\275\\357\\277\\275;a\\nb' 1
[ $fail = 0 ] && echo "protoc read the synthetic request"
exit $fail
