/*
 * retain_plan: which finished files retention removes, and why, for
 * max_files, max_size and min_free, without a disk; and the order it
 * takes them in: by the time in their names, across sessions.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "retain.h"

#define NOLIMIT	0
#define UNKNOWN	UINT64_MAX

static struct retain_file	 files[8];
static enum retain_why		 why[8];

/* A list of n files of the given sizes, oldest first. */
static struct retain_list
list(const uint64_t *sizes, size_t n)
{
	struct retain_list	 l = { files, n, 0 };
	size_t			 i;

	for (i = 0; i < n; i++) {
		files[i].size = sizes[i];
		l.bytes += sizes[i];
	}
	return l;
}

/*
 * Files of several sessions sort by the time their names carry, not by
 * name: "perfspill-h-0deep-..." would sort before the default session's
 * older files, and "perfspill-h-zz-..." after its newer ones.
 */
static void
check_order(void)
{
	static const char	*names[] = {
		"perfspill-h-zz-20261203T100000Z-000000.data",
		"perfspill-h-20261203T120000Z-000002.data",
		"perfspill-h-0deep-20261203T110000Z-000000.data",
		"perfspill-web-01-20261203T090000Z-000001.data",
		"perfspill-h-20261203T120000Z-000001.data",
		"perfspill-by-hand.data",
	};
	static const char	*want[] = {
		"perfspill-by-hand.data",	/* mtime 0: oldest */
		"perfspill-web-01-20261203T090000Z-000001.data",
		"perfspill-h-zz-20261203T100000Z-000000.data",
		"perfspill-h-0deep-20261203T110000Z-000000.data",
		"perfspill-h-20261203T120000Z-000001.data",
		"perfspill-h-20261203T120000Z-000002.data",
	};
	struct retain_list	 l = { files, 6, 0 };
	int64_t			 when;
	unsigned int		 seq;
	size_t			 i;

	memset(files, 0, sizeof(files));
	CHECK_EQ(retain_name_time(names[2], &when, &seq), 0);
	CHECK_EQ(when, 1796295600);	/* 2026-12-03 11:00:00 UTC */
	CHECK_EQ(seq, 0);
	CHECK_EQ(retain_name_time(names[1], &when, &seq), 0);
	CHECK_EQ(seq, 2);
	CHECK_EQ(retain_name_time("perfspill-by-hand.data", &when, &seq), -1);
	CHECK_EQ(retain_name_time("perfspill-h-2026120XT120000Z-000001.data",
	    &when, &seq), -1);
	CHECK_EQ(retain_name_time("perfspill-h-20261203T120000Z-00001x.data",
	    &when, &seq), -1);
	for (i = 0; i < 6; i++) {
		snprintf(files[i].name, sizeof(files[i].name), "%s", names[i]);
		if (retain_name_time(names[i], &files[i].when,
		    &files[i].seq) == -1)
			files[i].when = 0;
	}
	retain_sort(&l);
	for (i = 0; i < 6; i++)
		CHECK_STR(files[i].name, want[i]);
	memset(files, 0, sizeof(files));
}

int
main(void)
{
	static const uint64_t	 five[] = { 10, 20, 30, 40, 50 };
	struct retain_list	 l;
	int			 oor;

	/* max_files: the oldest beyond the count */
	l = list(five, 5);
	CHECK_EQ(retain_plan(&l, UNKNOWN, 2, NOLIMIT, NOLIMIT, why, &oor), 3);
	CHECK_EQ(why[0], RETAIN_MAX_FILES);
	CHECK_EQ(why[2], RETAIN_MAX_FILES);
	CHECK_EQ(why[3], RETAIN_KEEP);
	CHECK_EQ(oor, 0);

	/* max_size: 150 bytes down to at most 120 */
	CHECK_EQ(retain_plan(&l, UNKNOWN, NOLIMIT, 120, NOLIMIT, why, &oor),
	    2);
	CHECK_EQ(why[1], RETAIN_MAX_SIZE);
	CHECK_EQ(why[2], RETAIN_KEEP);

	/* min_free reachable: 5 free, 30 wanted; 10 then 20 go, no more */
	CHECK_EQ(retain_plan(&l, 5, NOLIMIT, NOLIMIT, 30, why, &oor), 2);
	CHECK_EQ(why[0], RETAIN_MIN_FREE);
	CHECK_EQ(why[1], RETAIN_MIN_FREE);
	CHECK_EQ(why[2], RETAIN_KEEP);
	CHECK_EQ(oor, 0);

	/* exactly reachable without the newest: all but the newest go */
	CHECK_EQ(retain_plan(&l, 0, NOLIMIT, NOLIMIT, 100, why, &oor), 4);
	CHECK_EQ(why[4], RETAIN_KEEP);
	CHECK_EQ(oor, 0);

	/* out of reach (issue 12: min_free 1G on a small filesystem): the
	 * newest would have to go too, or even that is not enough: none */
	CHECK_EQ(retain_plan(&l, 0, NOLIMIT, NOLIMIT, 101, why, &oor), 0);
	CHECK_EQ(oor, 1);
	CHECK_EQ(why[0], RETAIN_KEEP);
	CHECK_EQ(retain_plan(&l, 5, NOLIMIT, NOLIMIT, 1ULL << 30, why, &oor),
	    0);
	CHECK_EQ(oor, 1);
	CHECK_EQ(why[4], RETAIN_KEEP);

	/* the count first, then min_free counts what the count freed */
	l = list(five, 4);
	CHECK_EQ(retain_plan(&l, 0, 3, NOLIMIT, 25, why, &oor), 2);
	CHECK_EQ(why[0], RETAIN_MAX_FILES);
	CHECK_EQ(why[1], RETAIN_MIN_FREE);
	CHECK_EQ(why[2], RETAIN_KEEP);
	CHECK_EQ(why[3], RETAIN_KEEP);

	/* unknown free space: min_free is not applied */
	CHECK_EQ(retain_plan(&l, UNKNOWN, NOLIMIT, NOLIMIT, 1000, why, &oor),
	    0);
	CHECK_EQ(oor, 0);

	/* one file, the newest: never removed for min_free */
	l = list(five, 1);
	CHECK_EQ(retain_plan(&l, 0, NOLIMIT, NOLIMIT, 5, why, &oor), 0);
	CHECK_EQ(oor, 1);
	/* enough free: nothing to do */
	CHECK_EQ(retain_plan(&l, 500, NOLIMIT, NOLIMIT, 5, why, &oor), 0);
	CHECK_EQ(oor, 0);

	/* held (a hand-off not done): never removed, still counted; the
	 * next oldest goes in its place */
	l = list(five, 5);
	files[0].held = 1;
	files[2].held = 1;
	CHECK_EQ(retain_plan(&l, UNKNOWN, 3, NOLIMIT, NOLIMIT, why, &oor), 2);
	CHECK_EQ(why[0], RETAIN_KEEP);
	CHECK_EQ(why[1], RETAIN_MAX_FILES);
	CHECK_EQ(why[2], RETAIN_KEEP);
	CHECK_EQ(why[3], RETAIN_MAX_FILES);
	CHECK_EQ(why[4], RETAIN_KEEP);
	/* max_size: 150 down to 100 takes 20 and 40 (10 and 30 held) */
	CHECK_EQ(retain_plan(&l, UNKNOWN, NOLIMIT, 100, NOLIMIT, why, &oor),
	    2);
	CHECK_EQ(why[1], RETAIN_MAX_SIZE);
	CHECK_EQ(why[3], RETAIN_MAX_SIZE);
	CHECK_EQ(why[0], RETAIN_KEEP);
	/* every file held: nothing goes, whatever the limits */
	memset(files, 0, sizeof(files));
	l = list(five, 5);
	for (size_t i = 0; i < 5; i++)
		files[i].held = 1;
	CHECK_EQ(retain_plan(&l, UNKNOWN, 1, 1, NOLIMIT, why, &oor), 0);
	/* min_free: held files are not counted as removable */
	CHECK_EQ(retain_plan(&l, 0, NOLIMIT, NOLIMIT, 10, why, &oor), 0);
	CHECK_EQ(oor, 1);
	files[1].held = 0;
	CHECK_EQ(retain_plan(&l, 0, NOLIMIT, NOLIMIT, 20, why, &oor), 1);
	CHECK_EQ(why[1], RETAIN_MIN_FREE);
	CHECK_EQ(oor, 0);
	CHECK_EQ(retain_plan(&l, 0, NOLIMIT, NOLIMIT, 21, why, &oor), 0);
	CHECK_EQ(oor, 1);
	memset(files, 0, sizeof(files));

	/* empty */
	l = list(five, 0);
	CHECK_EQ(retain_plan(&l, 0, 1, 1, 5, why, &oor), 0);
	CHECK_EQ(oor, 0);
	check_order();
	return check_exit();
}
