/*
 * check: the assertions of the unit tests. CHECK counts instead of
 * aborting so that one run reports every broken case, not just the first;
 * check_exit prints the tally as the last line, which is what a human
 * reading the meson log looks for, and turns any failure into a non-zero
 * exit, which is what meson looks for.
 */
#ifndef PERFSPILL_CHECK_H
#define PERFSPILL_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static unsigned int	check_passed;
static unsigned int	check_failed;

#define CHECK(cond) do {						\
	if (cond)							\
		check_passed++;						\
	else {								\
		check_failed++;						\
		printf("%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__,	\
		    #cond);						\
	}								\
} while (0)

/* Equality with both values printed: a bare "a == b" failed says little
 * when a and b come out of arithmetic. */
#define CHECK_EQ(a, b) do {						\
	intmax_t check_a_ = (intmax_t)(a), check_b_ = (intmax_t)(b);	\
									\
	if (check_a_ == check_b_)					\
		check_passed++;						\
	else {								\
		check_failed++;						\
		printf("%s:%d: CHECK_EQ(%s, %s) failed: %jd != %jd\n",	\
		    __FILE__, __LINE__, #a, #b, check_a_, check_b_);	\
	}								\
} while (0)

#define CHECK_U64(a, b) do {						\
	uint64_t check_a_ = (uint64_t)(a), check_b_ = (uint64_t)(b);	\
									\
	if (check_a_ == check_b_)					\
		check_passed++;						\
	else {								\
		check_failed++;						\
		printf("%s:%d: CHECK_U64(%s, %s) failed: %" PRIu64	\
		    " != %" PRIu64 "\n", __FILE__, __LINE__, #a, #b,	\
		    check_a_, check_b_);				\
	}								\
} while (0)

#define CHECK_STR(a, b) do {						\
	const char *check_a_ = (a), *check_b_ = (b);			\
									\
	if (check_a_ != NULL && check_b_ != NULL &&			\
	    strcmp(check_a_, check_b_) == 0)				\
		check_passed++;						\
	else {								\
		check_failed++;						\
		printf("%s:%d: CHECK_STR(%s, %s) failed: \"%s\" != "	\
		    "\"%s\"\n", __FILE__, __LINE__, #a, #b,		\
		    check_a_ ? check_a_ : "(null)",			\
		    check_b_ ? check_b_ : "(null)");			\
	}								\
} while (0)

/* The last line of every test binary, and its exit status. */
static inline int
check_exit(void)
{
	printf("%u passed, %u failed\n", check_passed, check_failed);
	fflush(stdout);
	return check_failed > 0 ? 1 : 0;
}

#endif
