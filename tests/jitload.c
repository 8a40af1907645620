/*
 * jitload: code generated at run time, named in /tmp/perf-PID.map as a
 * JIT names it (test_flame_native.py). Two generated loops, jit_hot and
 * jit_cold, run for 75 % and 25 % of SECONDS of CPU time; the map names
 * them, as perf reads it. x86-64 only (the test skips elsewhere).
 *
 * jitload SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "clocksecs.h"

/* mov ecx, 100000; 1: dec ecx; jnz 1b; ret */
static const uint8_t jit_loop[] = {
	0xb9, 0xa0, 0x86, 0x01, 0x00,
	0xff, 0xc9,
	0x75, 0xfc,
	0xc3,
};

int
main(int argc, char **argv)
{
	void		(*hot)(void), (*cold)(void);
	uint8_t		*code;
	const char	*dir;
	char		 path[4096];
	double		 secs, t0;
	FILE		*f;

	if (argc != 2) {
		fprintf(stderr, "usage: jitload SECONDS\n");
		return 2;
	}
#if !defined(__x86_64__)
	fprintf(stderr, "jitload: x86-64 only\n");
	return 77;
#endif
	secs = atof(argv[1]);
	code = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(code, jit_loop, sizeof(jit_loop));
	memcpy(code + 4096, jit_loop, sizeof(jit_loop));
	hot = (void (*)(void))(uintptr_t)code;
	cold = (void (*)(void))(uintptr_t)(code + 4096);
	/* where perf reads it, or a test's own directory (the daemon's
	 * PERFSPILL_TEST_JITMAP_DIR) */
	if ((dir = getenv("PERFSPILL_TEST_JITMAP_DIR")) == NULL)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)getpid());
	if ((f = fopen(path, "w")) == NULL) {
		perror(path);
		return 1;
	}
	fprintf(f, "%lx %zx jit_hot\n%lx %zx jit_cold\n",
	    (unsigned long)(uintptr_t)code, sizeof(jit_loop),
	    (unsigned long)(uintptr_t)(code + 4096), sizeof(jit_loop));
	fclose(f);
	printf("ready\n");
	fflush(stdout);
	t0 = clock_secs(CLOCK_PROCESS_CPUTIME_ID);
	while (clock_secs(CLOCK_PROCESS_CPUTIME_ID) - t0 < secs * 0.75)
		hot();
	while (clock_secs(CLOCK_PROCESS_CPUTIME_ID) - t0 < secs)
		cold();
	return 0;
}
