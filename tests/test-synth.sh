#!/bin/sh
#
# test-synth: record real perf_event rings with tests/synth-dump (the
# preamble from daemon/preamble/synth*.c) and check that the stock perf reads
# the files: stats, samples named after the task and function of a
# program that ran before recording started (so the /proc synthesis
# works), the header, tracepoint fields, clock data, a file cut short,
# and not one warning from perf on any of them.
#
# usage: [SYNTH_DUMP=build/tests/synth-dump SYNTH_DUMP_ZSTD=1 KEEP=1]
#	tests/test-synth.sh [perf]	(run as root, from anywhere;
#	KEEP=1 leaves the files and perf's output in /tmp/test-synth.*)

set -u

PERF=${1:-${PERF:-perf}}
TOP=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d /tmp/test-synth.XXXXXX)
TRACEFS=/sys/kernel/tracing
FAILED=0
SPINNER=

cleanup() {
	[ -n "$SPINNER" ] && kill "$SPINNER" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*"
	FAILED=$((FAILED + 1))
}

pass() {
	echo "ok: $*"
}

# perf NAME FILE ARGS...: run perf on FILE, keep stdout in $TMP/NAME.out;
# a non-zero exit or anything on stderr is a failure, except perf's note
# of LOST records: a busy machine makes synth-dump lose events, which
# says nothing of the file's format.
perf_run() {
	name=$1 file=$2
	shift 2
	"$PERF" "$@" -i "$file" >"$TMP/$name.out" 2>"$TMP/$name.all"
	rc=$?
	lost='Processed [0-9]+ (events and lost [0-9]+ chunks|samples and lost +[0-9.]+%)!'
	grep -v -E "^(Warning:|$lost|Check IO/CPU overload!|)\$" \
	    "$TMP/$name.all" >"$TMP/$name.err"
	grep -E "^$lost" "$TMP/$name.all" | sed 's/^/	note: /'
	if [ $rc -ne 0 ]; then
		fail "perf $* -i $(basename "$file") exited $rc"
		sed 's/^/	/' "$TMP/$name.all"
		return 1
	fi
	if [ -s "$TMP/$name.err" ]; then
		fail "perf $* -i $(basename "$file") warned:"
		sed 's/^/	/' "$TMP/$name.all" | head -20
		return 1
	fi
	return 0
}

# expect NAME REGEX WHAT: $TMP/NAME.out has a line matching REGEX.
expect() {
	if grep -Eq -- "$2" "$TMP/$1.out"; then
		pass "$3"
	else
		fail "$3: no line matching '$2' in perf output"
	fi
}

# count NAME REGEX: lines of $TMP/NAME.out matching REGEX.
count() {
	grep -Ec -- "$2" "$TMP/$1.out"
}

command -v "$PERF" >/dev/null || { echo "no perf ($PERF)"; exit 1; }
if [ ! -e "$TRACEFS/events" ]; then
	mount -t tracefs nodev "$TRACEFS" ||
	    { echo "cannot mount tracefs on $TRACEFS"; exit 1; }
fi

# synth-dump as meson builds it (tests/meson.build), with libzstd when
# SYNTH_DUMP_ZSTD is set.
SYNTH_DUMP=${SYNTH_DUMP:-$TOP/build/tests/synth-dump}
if [ ! -x "$SYNTH_DUMP" ]; then
	echo "FAIL: no $SYNTH_DUMP (ninja -C build, or set SYNTH_DUMP)"
	exit 1
fi
cp "$SYNTH_DUMP" "$TMP/synth-dump" || exit 1
ZDUMP=
[ -n "${SYNTH_DUMP_ZSTD:-}" ] && ZDUMP=$TMP/synth-dump
cat >"$TMP/spin.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile unsigned long sink;
static char buf[1 << 18];
/* Through a volatile pointer so the compiler keeps the call: a share of
 * the spinner's time is in libc, for the shared library check. */
void *(*volatile perfspill_fill)(void *, int, size_t) = memset;

__attribute__((noinline)) void
perfspill_spin(void)
{
	unsigned long	i;

	for (i = 0; i < 200000; i++)
		sink += i;
}

int
main(int argc, char **argv)
{
	struct timespec	s, n;
	double		secs = argc > 1 ? atof(argv[1]) : 10;

	clock_gettime(CLOCK_MONOTONIC, &s);
	do {
		perfspill_spin();
		perfspill_fill(buf, (int)sink, sizeof(buf));
		clock_gettime(CLOCK_MONOTONIC, &n);
	} while (n.tv_sec - s.tv_sec + (n.tv_nsec - s.tv_nsec) / 1e9 < secs);
	return 0;
}
EOF
if ! ${CC:-cc} -O1 -g -o "$TMP/spinner" "$TMP/spin.c"; then
	echo "FAIL: build spinner"
	exit 1
fi
cp "$TMP/spinner" "$TMP/childspin"
pass "synth-dump and the spinners"

# 1. cpu-clock, with a program that runs before the recording starts.
"$TMP/spinner" 60 &
SPINNER=$!
sleep 0.3
if ! "$TMP/synth-dump" "$TMP/cpu.data" -F 1000 -e cpu-clock -- \
    "$TMP/childspin" 1; then
	fail "synth-dump cpu-clock"
fi
kill "$SPINNER" 2>/dev/null
wait "$SPINNER" 2>/dev/null
SPINNER=

if perf_run stats "$TMP/cpu.data" report --stats; then
	expect stats 'SAMPLE events: +[1-9]' "report --stats: samples"
	expect stats 'MMAP events: +[1-9]' "report --stats: kernel mmap"
	expect stats 'MMAP2 events: +[1-9]' "report --stats: mmap2"
	expect stats 'COMM events: +[1-9]' "report --stats: comm"
	expect stats 'FORK events: +[1-9]' "report --stats: fork"
	expect stats 'FINISHED_INIT events: +1 ' "report --stats: finished init"
fi

if perf_run script "$TMP/cpu.data" script; then
	expect script '^ *spinner +[0-9]+ .* cpu-clock: .* perfspill_spin\+0x[0-9a-f]+ \(.*/spinner\)' \
	    "script: a task running before recording, by name and function"
	expect script '^ *childspin +[0-9]+ .* cpu-clock: .* perfspill_spin\+0x[0-9a-f]+ \(.*/childspin\)' \
	    "script: the recorded command, by name and function"
	expect script '\(\[kernel\.kallsyms\]\)' "script: kernel symbols"
	expect script ' spinner .* __memset[a-z0-9_]*\+0x[0-9a-f]+ \(/usr/lib/.*libc\.so\.6\)' \
	    "script: shared library symbols (the spinner's memset in libc)"
	n=$(count script ' spinner .* perfspill_spin')
	echo "	$n samples in perfspill_spin of the running spinner"
fi

if perf_run header "$TMP/cpu.data" report --header-only; then
	expect header "^# hostname : $(uname -n)\$" "header: hostname"
	expect header "^# os release : $(uname -r)\$" "header: os release"
	expect header "^# arch : $(uname -m)\$" "header: arch"
	expect header "^# nrcpus online : $(getconf _NPROCESSORS_ONLN)\$" \
	    "header: nrcpus online"
	expect header '^# nrcpus avail : [1-9]' "header: nrcpus avail"
	expect header '^# total memory : [1-9][0-9]* kB$' "header: total memory"
	expect header '^# cmdline : .*synth-dump .*-e cpu-clock' "header: cmdline"
	expect header '^# event : name = cpu-clock, .*id = \{ [0-9]' \
	    "header: event desc"
fi

if perf_run report "$TMP/cpu.data" report --stdio --sort comm,dso,sym; then
	expect report 'spinner +spinner +\[\.\] perfspill_spin' \
	    "report: the running spinner's function"
fi

# 2. The seekable perf.data layout, not a pipe: perf finds the data and
# the feature table through the file header. (A torn .partial is the
# daemon's salvage, tested in test_rotate.py.)
if perf_run layout "$TMP/cpu.data" report --header-only -I; then
	expect layout '^# data offset +: [1-9]' "header: data offset"
	expect layout '^# feat offset +: [1-9]' "header: feature table offset"
	expect layout '^# sibling threads : ' "header: cpu topology"
	expect layout '^# node0 meminfo' "header: numa topology"
	expect layout '^# pmu mappings: .*software = 1' "header: pmu mappings"
fi
if perf_run buildids "$TMP/cpu.data" buildid-list; then
	expect buildids '^[0-9a-f]{40} \[kernel\.kallsyms\]$' \
	    "buildid-list: the kernel's build-id"
fi

# The kernel map runs from _text to _etext, as /proc/kallsyms says
# (synth takes the size from /proc/iomem where it can, not reading
# kallsyms to its end).
text=$(awk '$3 == "_text" { print $1; exit }' /proc/kallsyms)
etext=$(awk '$3 == "_etext" { print $1; exit }' /proc/kallsyms)
if [ -n "$text" ] && [ "$text" != 0000000000000000 ] &&
    perf_run kmap "$TMP/cpu.data" script -D --show-mmap-events; then
	# 64-bit addresses overflow the shell's signed arithmetic
	len=$(python3 -c "print('%x' % (0x$etext - 0x$text))")
	expect kmap "PERF_RECORD_MMAP -1/0: \\[0x$text\\(0x$len\\) @ 0x$text\\]: x \\[kernel\\.kallsyms\\]_text" \
	    "kernel map: _text to _etext, as /proc/kallsyms gives them"
fi

# 3. A tracepoint: perf needs the tracing data to name its fields.
if ! "$TMP/synth-dump" "$TMP/sched.data" -F 1000 -e cpu-clock \
    -e sched:sched_switch -- "$TMP/childspin" 0.5; then
	fail "synth-dump sched:sched_switch"
fi
if perf_run sched "$TMP/sched.data" script; then
	expect sched 'sched:sched_switch: prev_comm=.* prev_pid=[0-9]+ .*==> next_comm=.* next_pid=[0-9]+' \
	    "script: sched_switch fields by name"
	expect sched ' cpu-clock: ' "script: cpu-clock next to the tracepoint"
fi
if perf_run schedhdr "$TMP/sched.data" report --header-only; then
	expect schedhdr '^# event : name = sched:sched_switch, ' \
	    "header: tracepoint event desc"
fi
if perf_run schedstats "$TMP/sched.data" report --stats; then
	expect schedstats '^sched:sched_switch stats:' "report --stats: tracepoint"
fi
if perf_run schedreport "$TMP/sched.data" report --stdio; then
	expect schedreport "^# Samples: [0-9]+[KMG]? +of event 'sched:sched_switch'" \
	    "report: tracepoint samples"
	expect schedreport "^# Samples: [0-9]+[KMG]? +of event 'cpu-clock'" \
	    "report: cpu-clock samples"
fi

# 4. Call chains and a clockid with its reference time.
if ! "$TMP/synth-dump" "$TMP/clock.data" -g -k -F 500 -e cpu-clock -- \
    "$TMP/childspin" 0.3; then
	fail "synth-dump -g -k"
fi
if perf_run clockhdr "$TMP/clock.data" report --header-only; then
	expect clockhdr '^# clockid: monotonic \(1\)' "header: clockid"
	expect clockhdr '^# reference time: ' "header: reference time"
fi
perf_run clockscript "$TMP/clock.data" script &&
    expect clockscript 'perfspill_spin\+0x' "script: call chains"

# 5. Ring data as zstd PERF_RECORD_COMPRESSED: perf needs the
# compressed feature to decode it. sched_switch is recorded system-wide:
# beside a syscall storm its 256 KiB rings overflowed once and took the
# command's COMM with them (perf then named none of its samples), so
# these rings hold 1 MiB.
if [ -z "$ZDUMP" ]; then
	echo "skip: compressed ring data (synth-dump without libzstd)"
elif ! "$ZDUMP" "$TMP/zstd.data" -z 3 -F 1000 -m 256 -e cpu-clock \
    -e sched:sched_switch -- "$TMP/childspin" 0.5; then
	fail "synth-dump -z"
else
	if perf_run zhdr "$TMP/zstd.data" report --header-only; then
		expect zhdr '^# compressed : Zstd, level = 3, ' \
		    "header: compressed"
	fi
	if perf_run zscript "$TMP/zstd.data" script; then
		expect zscript '^ *childspin +[0-9]+ .* cpu-clock: .* perfspill_spin\+0x' \
		    "script: compressed samples, by name and function"
		expect zscript 'sched:sched_switch: prev_comm=' \
		    "script: compressed tracepoint samples"
	fi
fi

# 6. A fake procfs: a module, a process with a thread, one thread and
# one process that vanished, a kernel thread; the records perf sees.
P=$TMP/proc
# The pids are above any pid_max, so that no live task can match them.
mkdir -p "$P/3999999/task/3999999" "$P/3999999/task/3999998" \
    "$P/3999999/task/3999997" "$P/3999996" "$P/3999990/task/3999990" \
    "$P/self"
grep -w -e _text -e _etext /proc/kallsyms >"$P/kallsyms"
cat >"$P/modules" <<'EOF'
perfspill_fake 16384 0 - Live 0xffffffffc0000000
perfspill_gone 16384 0 - Unloading 0xffffffffc0010000
EOF
printf 'Name:\tfakeproc\nState:\tR (running)\nTgid:\t3999999\nPid:\t3999999\nPPid:\t1\nVmPeak:\t    1000 kB\nThreads:\t2\n' \
    >"$P/3999999/task/3999999/status"
printf 'Name:\tfakethread\nState:\tS (sleeping)\nTgid:\t3999999\nPid:\t3999998\nPPid:\t1\nVmPeak:\t    1000 kB\nThreads:\t2\n' \
    >"$P/3999999/task/3999998/status"
printf 'Name:\tkfake\nState:\tI (idle)\nTgid:\t3999990\nPid:\t3999990\nPPid:\t2\nThreads:\t1\n' \
    >"$P/3999990/task/3999990/status"
dev=$((0x$(stat -c %D "$TMP/spinner")))
ino=$(stat -c %i "$TMP/spinner")
mm=$(printf '%02x:%02x' $(((dev >> 8) & 0xfff)) \
    $(((dev & 0xff) | ((dev >> 12) & 0xfff00))))
cat >"$P/3999999/maps" <<EOF
55d000000000-55d000001000 r--p 00000000 $mm $ino                    $TMP/spinner
55d000001000-55d000002000 r-xp 00001000 $mm $ino                    $TMP/spinner
7f0000000000-7f0000001000 r-xp 00000000 00:00 0 
7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
EOF
echo '400000-401000 r-xp 00000000 00:00 0 ' >"$P/3999990/maps"
bid=$(readelf -n "$TMP/spinner" 2>/dev/null | awk '/Build ID/ { print $3 }')

if ! "$TMP/synth-dump" "$TMP/fake.data" -P "$P" -F 100 -e cpu-clock -- \
    true; then
	fail "synth-dump -P"
fi
if perf_run fake "$TMP/fake.data" script -D; then
	expect fake 'PERF_RECORD_MMAP -1/0: \[0xffffffff[0-9a-f]+\(0x[0-9a-f]+\) @ 0xffffffff[0-9a-f]+\]: x \[kernel\.kallsyms\]_text' \
	    "fake procfs: kernel map"
	expect fake 'PERF_RECORD_MMAP -1/0: \[0xffffffffc0000000\(0x4000\) @ 0\]: x \[perfspill_fake\]' \
	    "fake procfs: module map"
	expect fake 'PERF_RECORD_FORK\(3999999:3999999\):\(1:1\)' "fake procfs: process fork"
	expect fake 'PERF_RECORD_COMM: fakeproc:3999999/3999999' "fake procfs: process comm"
	expect fake 'PERF_RECORD_FORK\(3999999:3999998\):\(3999999:3999999\)' "fake procfs: thread fork"
	expect fake 'PERF_RECORD_COMM: fakethread:3999999/3999998' "fake procfs: thread comm"
	expect fake 'PERF_RECORD_COMM: kfake:3999990/3999990' "fake procfs: kernel thread comm"
	expect fake "PERF_RECORD_MMAP2 3999999/3999999: \\[0x55d000001000\\(0x1000\\) @ 0x1000 <$bid>\\]: r-xp $TMP/spinner\$" \
	    "fake procfs: mmap2 with the build-id"
	expect fake 'PERF_RECORD_MMAP2 3999999/3999999: \[0x7f0000000000\(0x1000\) @ 0 00:00 0 0\]: r-xp //anon$' \
	    "fake procfs: anonymous exec mapping"
	expect fake 'PERF_RECORD_MMAP2 3999999/3999999: \[0x7ffd00000000\(0x2000\) @ 0 00:00 0 0\]: r-xp \[vdso\]$' \
	    "fake procfs: vdso"
	if [ "$(count fake 'PERF_RECORD_MMAP2 3999999/')" -eq 3 ]; then
		pass "fake procfs: exec mappings only"
	else
		fail "fake procfs: want 3 MMAP2 of 3999999"
	fi
	if [ "$(count fake 'perfspill_gone|3999997|3999996|MMAP2 3999990/')" \
	    -eq 0 ]; then
		pass "fake procfs: nothing of unloading modules, vanished tasks, kernel thread maps"
	else
		fail "fake procfs: records of what should be skipped"
	fi
fi

if [ $FAILED -ne 0 ]; then
	echo "test-synth: $FAILED check(s) failed"
	exit 1
fi
echo "test-synth: all checks passed"
exit 0
