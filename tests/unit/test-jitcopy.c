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

static void
test_pid_of(void)
{
	CHECK_EQ(jitcopy_pid_of("perf-4242.map"), 4242);
	CHECK_EQ(jitcopy_pid_of("perf-1.map"), 1);
	CHECK_EQ(jitcopy_pid_of("perf-2147483647.map"), 2147483647);
	/* not one of ours: each would name another file or no process */
	CHECK_EQ(jitcopy_pid_of("perf-0.map"), 0);
	CHECK_EQ(jitcopy_pid_of("perf-042.map"), 0);
	CHECK_EQ(jitcopy_pid_of("perf-.map"), 0);
	CHECK_EQ(jitcopy_pid_of("perf-12a.map"), 0);
	CHECK_EQ(jitcopy_pid_of("perf-12.map.tmp"), 0);
	CHECK_EQ(jitcopy_pid_of("perf-12.mapx"), 0);
	CHECK_EQ(jitcopy_pid_of("perf-2147483648.map"), 0);
	CHECK_EQ(jitcopy_pid_of("perf-99999999999999999999.map"), 0);
	CHECK_EQ(jitcopy_pid_of("xperf-12.map"), 0);
	CHECK_EQ(jitcopy_pid_of("perf--12.map"), 0);
	CHECK_EQ(jitcopy_pid_of("perf-12/.map"), 0);
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

int
main(void)
{
	test_pid_of();
	test_tar_header();
	return check_exit();
}
