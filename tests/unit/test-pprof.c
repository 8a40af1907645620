/*
 * test-pprof: the pprof encoder (flame/pprof.c). What is interned is
 * interned once (mappings by key, locations by mapping and address,
 * samples by locations and labels, whose counts add), and the bytes are
 * profile.proto's: fields checked at known places of a small profile.
 *
 * test-pprof OUT.pb.gz also writes a synthetic profile for a real reader
 * (tests/integration/test_pprof.py runs go tool pprof -raw on it): two
 * mappings with build-ids, a location of inlined functions, a frame in
 * no mapping, labels of both kinds, time, duration and period.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pprof.h"

static struct pprof *
synthetic(void)
{
	static const struct pprof_map	 app = { 0x400000, 0x401000, 0,
	    "/usr/bin/app", "0123456789abcdef0123456789abcdef01234567" };
	static const struct pprof_map	 libc = { 0x7f0000000000,
	    0x7f0000100000, 0x28000, "/lib/x86_64-linux-gnu/libc.so.6",
	    "fedcba9876543210" };
	static const char *const	 inl[] = { "inner_inlined", "outer" };
	static const char *const	 leaf[] = { "leaf" };
	static const char *const	 mn[] = { "main" };
	static const char *const	 memcpy_[] = { "memcpy" };
	struct pprof_info		 info = { 1764856800000000000LL,
	    2000000000LL, 1001001, "synthetic", NULL };
	struct pprof_label		 lab[3] = {
		{ "comm", "app", 0 }, { "pid", NULL, 4242 },
		{ "host", "h1", 0 } };
	struct pprof			*pp;
	uint64_t			 m1, m2, l[4];

	if ((pp = pprof_create(&info)) == NULL)
		return NULL;
	m1 = pprof_mapping(pp, 1, &app);
	m2 = pprof_mapping(pp, 2, &libc);
	l[0] = pprof_location(pp, m2, 0x7f0000028100, memcpy_, 1);
	l[1] = pprof_location(pp, m1, 0x400120, inl, 2);
	l[2] = pprof_location(pp, m1, 0x400080, leaf, 1);
	l[3] = pprof_location(pp, m1, 0x400010, mn, 1);
	/* main -> outer (inner_inlined) -> memcpy, 3 samples */
	pprof_sample(pp, (uint64_t[]){ l[0], l[1], l[3] }, 3, 3, 3003003,
	    lab, 3);
	/* main -> leaf, 7 samples, another pid */
	lab[1].num = 4243;
	pprof_sample(pp, (uint64_t[]){ l[2], l[3] }, 2, 7, 7007007, lab, 3);
	/* code in no mapping, unnamed */
	l[0] = pprof_location(pp, 0, 0xdead0000, NULL, 0);
	pprof_sample(pp, l, 1, 1, 1001001, lab, 1);
	return pp;
}

static void
test_interning(void)
{
	static const struct pprof_map	 m = { 0x1000, 0x2000, 0, "/a", "" };
	static const char *const	 f[] = { "f" }, *const g[] = { "g" };
	struct pprof_info		 info = { 0, 0, 0, NULL, NULL };
	struct pprof_label		 lab = { "pid", NULL, 1 };
	struct pprof			*pp = pprof_create(&info);
	uint64_t			 a, b, l1, l2;

	CHECK(pp != NULL);
	a = pprof_mapping(pp, 77, &m);
	b = pprof_mapping(pp, 77, &m);
	CHECK_EQ(a, 1);
	CHECK_EQ(b, a);
	CHECK_EQ(pprof_mapping(pp, 78, &m), 2);
	l1 = pprof_location(pp, a, 0x1100, f, 1);
	/* the same place: the first names stay */
	l2 = pprof_location(pp, a, 0x1100, g, 1);
	CHECK_EQ(l1, l2);
	CHECK(pprof_location(pp, a, 0x1104, f, 1) != l1);
	CHECK(pprof_location(pp, 2, 0x1100, f, 1) != l1);
	CHECK_EQ(pprof_sample(pp, &l1, 1, 2, 20, &lab, 1), 0);
	CHECK_EQ(pprof_sample(pp, &l1, 1, 3, 30, &lab, 1), 0);
	lab.num = 2;
	CHECK_EQ(pprof_sample(pp, &l1, 1, 1, 10, &lab, 1), 0);
	CHECK_EQ(pprof_samples(pp), 6);
	pprof_free(pp);
}

/* The varint at *p; p moved past it. */
static uint64_t
varint(const uint8_t **p)
{
	uint64_t	 v = 0;
	int		 shift = 0;

	while (**p & 0x80) {
		v |= (uint64_t)(**p & 0x7f) << shift;
		shift += 7;
		(*p)++;
	}
	v |= (uint64_t)**p << shift;
	(*p)++;
	return v;
}

/* The wire format: walks the top-level fields of the synthetic profile
 * and counts them by number; checks the string table starts with "". */
static void
test_encoding(void)
{
	struct pprof	*pp = synthetic();
	const uint8_t	*p, *end;
	uint8_t		*buf;
	size_t		 len, count[16] = { 0 };
	uint64_t	 key, n, v;
	int		 first_string = 1;

	CHECK(pp != NULL);
	CHECK_EQ(pprof_encode(pp, &buf, &len), 0);
	for (p = buf, end = buf + len; p < end; ) {
		key = varint(&p);
		if ((key & 7) == 0) {
			v = varint(&p);
			if ((key >> 3) == 12)
				CHECK_EQ(v, 1001001);
			if ((key >> 3) == 10)
				CHECK_EQ(v, 2000000000);
		} else {
			CHECK_EQ(key & 7, 2);
			n = varint(&p);
			if ((key >> 3) == 6 && first_string) {
				CHECK_EQ(n, 0);
				first_string = 0;
			}
			p += n;
		}
		CHECK(p <= end);
		if ((key >> 3) < 16)
			count[key >> 3]++;
	}
	CHECK_EQ(count[1], 2);		/* samples/count, cpu/nanoseconds */
	CHECK_EQ(count[2], 3);		/* samples */
	CHECK_EQ(count[3], 2);		/* mappings */
	CHECK_EQ(count[4], 5);		/* locations */
	CHECK_EQ(count[5], 5);		/* memcpy, inner_inlined, outer,
					 * leaf, main */
	CHECK_EQ(count[9], 1);		/* time */
	CHECK_EQ(count[11], 1);		/* period type */
	CHECK_EQ(count[13], 1);		/* comment */
	free(buf);
	pprof_free(pp);
}

int
main(int argc, char **argv)
{
	struct pprof	*pp;
	FILE		*f;

	if (argc > 1) {
		if ((pp = synthetic()) == NULL || (f = fopen(argv[1], "w")) ==
		    NULL || pprof_write(pp, f) == -1 || fclose(f) == EOF) {
			perror(argv[1]);
			return 1;
		}
		pprof_free(pp);
		return 0;
	}
	test_interning();
	test_encoding();
	return check_exit();
}
