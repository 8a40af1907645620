/*
 * test-jitcopy: the pure parts of the daemon's JIT map copier: which
 * names in /tmp are perf maps (and of which pid), and the ustar header
 * each copied map gets (its fields and checksum as tar reads them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jitcopy.h"
#include "jitnames.h"

static void
test_pid_of(void)
{
	CHECK_EQ(jitnames_pid_of("perf-4242.map"), 4242);
	CHECK_EQ(jitnames_pid_of("perf-1.map"), 1);
	CHECK_EQ(jitnames_pid_of("perf-2147483647.map"), 2147483647);
	/* not one of ours: each would name another file or no process */
	CHECK_EQ(jitnames_pid_of("perf-0.map"), 0);
	CHECK_EQ(jitnames_pid_of("perf-042.map"), 0);
	CHECK_EQ(jitnames_pid_of("perf-.map"), 0);
	CHECK_EQ(jitnames_pid_of("perf-12a.map"), 0);
	CHECK_EQ(jitnames_pid_of("perf-12.map.tmp"), 0);
	CHECK_EQ(jitnames_pid_of("perf-12.mapx"), 0);
	CHECK_EQ(jitnames_pid_of("perf-2147483648.map"), 0);
	CHECK_EQ(jitnames_pid_of("perf-99999999999999999999.map"), 0);
	CHECK_EQ(jitnames_pid_of("xperf-12.map"), 0);
	CHECK_EQ(jitnames_pid_of("perf--12.map"), 0);
	CHECK_EQ(jitnames_pid_of("perf-12/.map"), 0);
}

/* A header field's octal number. */
static unsigned long long
octal(const uint8_t *p, size_t n)
{
	char	 buf[16];

	memcpy(buf, p, n);
	buf[n] = '\0';
	return strtoull(buf, NULL, 8);
}

static void
test_tar_header(void)
{
	uint8_t		 h[512];
	unsigned int	 sum = 0, i;

	jitcopy_tar_header(h, "perf-4242.map", 1000000, 1000, 100,
	    1764856800);
	CHECK(strcmp((char *)h, "perf-4242.map") == 0);
	CHECK_EQ(octal(h + 100, 8), 0644);
	CHECK_EQ(octal(h + 108, 8), 1000);
	CHECK_EQ(octal(h + 116, 8), 100);
	CHECK_EQ(octal(h + 124, 12), 1000000);
	CHECK_EQ(octal(h + 136, 12), 1764856800);
	CHECK_EQ(h[156], '0');
	CHECK(memcmp(h + 257, "ustar\0" "00", 8) == 0);
	/* the checksum: every byte, its own field counted as blanks */
	for (i = 0; i < 512; i++)
		sum += i >= 148 && i < 156 ? ' ' : h[i];
	CHECK_EQ(octal(h + 148, 6), sum);
	CHECK_EQ(h[154], '\0');
	CHECK_EQ(h[155], ' ');
}

/* Field 22 of /proc/PID/stat, whatever the comm holds. */
static void
test_stat_start(void)
{
	uint64_t	 v = 0;

	CHECK_EQ(jitcopy_stat_start("4242 (java) S 1 4242 4242 0 -1 4194560 "
	    "100 0 0 0 5 3 0 0 20 0 20 0 123456 9000000 300 "
	    "18446744073709551615\n", &v), 0);
	CHECK_U64(v, 123456);
	/* a comm that looks like fields: the last ')' ends it */
	CHECK_EQ(jitcopy_stat_start("4243 (a) 1 2 3 4 5 6 7 8 9 1 2 3 4 5 6 "
	    "7 8 9 0 1 2) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 20 "
	    "0 777 9000000\n", &v), 0);
	CHECK_U64(v, 777);
	/* too short, or not a number there */
	CHECK_EQ(jitcopy_stat_start("4244 (x) S 1 2 3", &v), -1);
	CHECK_EQ(jitcopy_stat_start("4244 (x) S 1 4242 4242 0 -1 4194560 100 "
	    "0 0 0 5 3 0 0 20 0 20 0 -5 9000000\n", &v), -1);
	CHECK_EQ(jitcopy_stat_start("no parenthesis", &v), -1);
}

/* The sampled process started before its pid's first sample; one that
 * took the pid later did not. */
static void
test_started_before(void)
{
	const uint64_t	 tick = 10000000;	/* ns, at 100 Hz */
	const int64_t	 off = -1245000;	/* perf clock behind by 1.2 ms */

	/* started at tick 500, first sampled 3 ms after */
	CHECK_EQ(jitcopy_started_before(500, 100, off, 500 * tick + off +
	    3000000), 1);
	/* the start counts down to its tick: sampled within the tick */
	CHECK_EQ(jitcopy_started_before(500, 100, off, 500 * tick + off), 1);
	CHECK_EQ(jitcopy_started_before(500, 100, off, 500 * tick + off -
	    JITCOPY_CLOCK_SLACK), 1);
	/* started a tick after the pid's first sample: another process */
	CHECK_EQ(jitcopy_started_before(501, 100, off, 500 * tick + off +
	    (tick - JITCOPY_CLOCK_SLACK) - 1), 0);
	CHECK_EQ(jitcopy_started_before(900, 100, off, 500 * tick), 0);
	/* nothing to compare, or out of range: not the same */
	CHECK_EQ(jitcopy_started_before(500, 100, off, 0), 0);
	CHECK_EQ(jitcopy_started_before(500, 0, off, 500 * tick), 0);
	CHECK_EQ(jitcopy_started_before(UINT64_MAX / 2, 100, 0, 1), 0);
	CHECK_EQ(jitcopy_started_before(5, 100, INT64_MAX, 1), 0);
}

int
main(void)
{
	test_pid_of();
	test_tar_header();
	test_stat_start();
	test_started_before();
	return check_exit();
}
