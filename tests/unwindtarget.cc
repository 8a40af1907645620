// A C++ program with a known call path, main -> work::outer_fn ->
// work::middle_fn -> work::leaf_fn (about 70 % of its time), and
// main -> work::side_fn (30 %), built -O2 -fomit-frame-pointer
// (tests/meson.build) so that only DWARF CFI unwinds it
// (test_unwind.py). Each function is kept out of line (noinline) and
// given work of its own around the call (an asm barrier the compiler
// cannot see through), so that none becomes a tail call. Runs for the
// seconds its first argument says (default 5), then prints its pid.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <unistd.h>

namespace work {

__attribute__((noinline)) unsigned long
leaf_fn(unsigned long x)
{
	for (int i = 0; i < 20000; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		asm volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) unsigned long
middle_fn(unsigned long x)
{
	unsigned long	 y = leaf_fn(x);

	asm volatile("" : "+r"(y));
	return y ^ (x >> 3);
}

__attribute__((noinline)) unsigned long
outer_fn(unsigned long x)
{
	unsigned long	 y = middle_fn(x + 1);

	asm volatile("" : "+r"(y));
	return y + (x << 1);
}

__attribute__((noinline)) unsigned long
side_fn(unsigned long x)
{
	int	 i = 0;

	/* xorshift, as long as leaf_fn's loop */
	while (i++ < 20000) {
		x ^= x << 13;
		x ^= x >> 7;
		asm volatile("" : "+r"(x));
		x ^= x << 17;
	}
	return x | 1;
}

}	// namespace work

int
main(int argc, char **argv)
{
	double		 secs = argc > 1 ? atof(argv[1]) : 5;
	struct timespec	 t0, t;
	unsigned long	 x = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 70; i++)
			x = work::outer_fn(x);
		for (int i = 0; i < 30; i++)
			x = work::side_fn(x);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) +
	    (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("%d %lu\n", (int)getpid(), x & 1);
	return 0;
}
