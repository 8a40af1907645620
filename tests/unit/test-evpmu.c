/*
 * evsel-pmu: a PMU event against a made-up sysfs tree: the type, format
 * terms spread over split bit ranges, a named event's terms, perf's own
 * terms, and the errors for an unknown PMU or term and a value wider
 * than its bits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "evparse.h"
#include "evsel.h"

static char	root[64];

static void
put(const char *rel, const char *text)
{
	char	 path[256], *p;
	FILE	*f;

	snprintf(path, sizeof path, "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
	if ((f = fopen(path, "w")) != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static int
resolve(const char *text, struct evsel *ev, char *err, size_t len)
{
	struct evparse_event	 pe;
	size_t			 n;

	memset(ev, 0, sizeof(*ev));
	if (evparse_list(text, &pe, 1, &n, err, len) == -1)
		return -1;
	snprintf(ev->name, sizeof ev->name, "%s", pe.name);
	return evsel_pmu(ev, root, &pe, err, len);
}

int
main(void)
{
	struct evsel	 ev;
	char		 err[512], cmd[128];

	snprintf(root, sizeof root, "/tmp/test-evpmu.XXXXXX");
	if (mkdtemp(root) == NULL)
		return 1;
	put("xpmu/type", "42\n");
	put("xpmu/format/event", "config:0-7\n");
	put("xpmu/format/umask", "config:8-11,32-35\n");
	put("xpmu/format/any", "config:21\n");
	put("xpmu/format/ldlat", "config1:0-15\n");
	put("xpmu/events/loads", "event=0xcd,umask=0x1,ldlat=3\n");

	CHECK_EQ(resolve("xpmu/event=0x3c,umask=0x55/", &ev, err, sizeof err),
	    0);
	CHECK_EQ(ev.attr.type, 42);
	/* umask's low 4 bits at 8, its next 4 at 32 */
	CHECK_EQ(ev.attr.config, 0x3c | (0x5ULL << 8) | (0x5ULL << 32));
	CHECK_EQ(resolve("xpmu/any/", &ev, err, sizeof err), 0);
	CHECK_EQ(ev.attr.config, 1ULL << 21);
	CHECK_EQ(resolve("xpmu/loads/", &ev, err, sizeof err), 0);
	CHECK_EQ(ev.attr.config, 0xcd | (1ULL << 8));
	CHECK_EQ(ev.attr.config1, 3);
	CHECK_EQ(resolve("xpmu/config=7,config2=9,period=1000/", &ev, err,
	    sizeof err), 0);
	CHECK_EQ(ev.attr.config, 7);
	CHECK_EQ(ev.attr.config2, 9);
	CHECK_EQ(ev.attr.sample_period, 1000);
	CHECK_EQ(ev.own_period, 1);
	CHECK_EQ(resolve("xpmu/event=1,name=mine/", &ev, err, sizeof err), 0);
	CHECK(strcmp(ev.name, "mine") == 0);

	CHECK_EQ(resolve("xpmu/event=0x100/", &ev, err, sizeof err), -1);
	CHECK(strstr(err, "wider than the term's bits") != NULL);
	CHECK_EQ(resolve("xpmu/nosuch=1/", &ev, err, sizeof err), -1);
	CHECK(strstr(err, "unknown term 'nosuch' for pmu 'xpmu'") != NULL);
	CHECK(strstr(err, "loads") != NULL);
	CHECK_EQ(resolve("xpmu/event=zz/", &ev, err, sizeof err), -1);
	CHECK(strstr(err, "not a number") != NULL);
	CHECK_EQ(resolve("nopmu/event=1/", &ev, err, sizeof err), -1);
	CHECK(strstr(err, "no PMU named 'nopmu'") != NULL);
	CHECK(strstr(err, "xpmu") != NULL);
	put("tp/type", "2\n");
	CHECK_EQ(resolve("tp/config=1/", &ev, err, sizeof err), -1);
	CHECK(strstr(err, "system:name") != NULL);

	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (system(cmd) != 0)
		printf("could not remove %s\n", root);
	return check_exit();
}
