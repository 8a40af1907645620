/*
 * cpuring: the sysfs CPU list parser (start and CPU hotplug read it) and
 * the slot layout of a CPU's events with and without a cgroup filter.
 */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "cpuring.h"

static void
check_list(const char *s, const int *want, size_t nr)
{
	int	*cpus = NULL;
	size_t	 n = 0, i;

	CHECK_EQ(cpuring_parse_list(s, &cpus, &n), 0);
	CHECK_EQ(n, nr);
	for (i = 0; i < n && i < nr; i++)
		CHECK_EQ(cpus[i], want[i]);
	free(cpus);
}

static void
check_bad(const char *s)
{
	int	*cpus = NULL;
	size_t	 n = 0;

	errno = 0;
	CHECK_EQ(cpuring_parse_list(s, &cpus, &n), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK(cpus == NULL);
}

static void
test_parse_list(void)
{
	static const int	 a[] = { 0 };
	static const int	 b[] = { 0, 1 };
	static const int	 c[] = { 0, 1, 2, 3, 6, 8, 9 };
	static const int	 d[] = { 1 };

	check_list("0\n", a, 1);
	check_list("0-1\n", b, 2);
	check_list("0-1", b, 2);
	check_list("0-3,6,8-9\n", c, 7);
	check_list("1\n", d, 1);	/* cpu0 offline: never assume 0..N-1 */
	check_bad("");
	check_bad("\n");
	check_bad("x");
	check_bad("0-");
	check_bad("3-1");
	check_bad("0,,1");
	check_bad("-1");
	check_bad("0 1");
	check_bad("0-99999999");
}

static void
test_slots(void)
{
	struct evsel		 evs[3];
	int			 cg[2] = { 10, 11 };
	struct cpuring_spec	 s = { evs, 3, NULL, 0, 1, 0 };

	/* no filter: one fd per event */
	CHECK_EQ(cpuring_nr_fds(&s), 3);
	CHECK_EQ(cpuring_slot_event(&s, 0), 0);
	CHECK_EQ(cpuring_slot_event(&s, 2), 2);
	/* filter: the tracking event once, the others once per cgroup,
	 * the slots of one event consecutive */
	s.cgfds = cg;
	s.nr_cg = 2;
	CHECK_EQ(cpuring_nr_fds(&s), 5);
	CHECK_EQ(cpuring_slot_event(&s, 0), 0);
	CHECK_EQ(cpuring_slot_event(&s, 1), 1);
	CHECK_EQ(cpuring_slot_event(&s, 2), 1);
	CHECK_EQ(cpuring_slot_event(&s, 3), 2);
	CHECK_EQ(cpuring_slot_event(&s, 4), 2);
	/* a group member finds its leader's slot of the same target */
	CHECK_EQ(cpuring_slot(&s, 0, 0), 0);
	CHECK_EQ(cpuring_slot(&s, 1, 1), 2);
	CHECK_EQ(cpuring_slot(&s, 2, 0), 3);
	CHECK_EQ(cpuring_slot(&s, 2, 1), 4);
	s.nr_cg = 0;
	CHECK_EQ(cpuring_slot(&s, 2, 0), 2);
}

int
main(void)
{
	test_parse_list();
	test_slots();
	return check_exit();
}
