// names: C++ code whose frames perf names in its own way (test_names.py):
// namespaces, a class template, a std::vector parameter, a function
// inlined with its debug info, and a call to libc through the PLT on the
// hot path. Prints "ready", runs ARGV[1] seconds, then exits.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace work {

template <typename T> struct Acc {
	T	 sum;
	__attribute__((noinline)) T add(const std::vector<T> &v);
};

template <typename T> T
Acc<T>::add(const std::vector<T> &v)
{
	for (const T &x : v)
		sum += x * 3 + 1;
	return sum;
}

// inlined into do_map: perf report --inline shows it as a frame of its own
static inline __attribute__((always_inline)) unsigned long
squash(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	return x;
}

__attribute__((noinline)) unsigned long
do_map(const std::vector<unsigned long> &v)
{
	unsigned long	 s = 0;

	for (unsigned long x : v)
		s += squash(x);
	return s;
}

__attribute__((noinline)) unsigned long
plt_round(unsigned int seed)
{
	unsigned long	 t = 0;

	for (int i = 0; i < 20000; i++)
		t += rand_r(&seed);	// through rand_r@plt
	return t;
}

} // namespace work

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	double			 end = now() + (argc > 1 ? atof(argv[1]) : 2);
	std::vector<unsigned long> v(2048, 7);
	work::Acc<unsigned long> a = { 0 };
	unsigned long		 s = 0;

	printf("ready\n");
	fflush(stdout);
	while (now() < end) {
		s += work::do_map(v);
		s += a.add(v);
		s += work::plt_round((unsigned int)s);
	}
	printf("%lu\n", s);
	return 0;
}
