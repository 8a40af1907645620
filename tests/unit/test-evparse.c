/*
 * evparse: perf's -e grammar. Each accepted form is one perf record 6.1
 * takes, named as perf evlist names it; each refused one perf refuses
 * too, with "event syntax error".
 */
#include <string.h>

#include "check.h"
#include "evparse.h"

static struct evparse_event	ev[EVPARSE_MAX_EVENTS];
static size_t			nev;
static char			err[256];

static int
parse(const char *s)
{
	err[0] = '\0';
	nev = 0;
	return evparse_list(s, ev, EVPARSE_MAX_EVENTS, &nev, err, sizeof err);
}

static void
bad(const char *s, const char *why)
{
	CHECK_EQ(parse(s), -1);
	CHECK(strncmp(err, "event syntax error: '", 21) == 0);
	if (strstr(err, why) == NULL)
		printf("'%s': '%s' lacks '%s'\n", s, err, why);
	CHECK(strstr(err, why) != NULL);
}

static void
test_symbols(void)
{
	CHECK_EQ(parse("cpu-clock"), 0);
	CHECK_EQ(nev, 1);
	CHECK_EQ(ev[0].kind, EVPARSE_SYMBOL);
	CHECK(strcmp(ev[0].name, "cpu-clock") == 0);
	CHECK_EQ(ev[0].mods.user + ev[0].mods.kernel + ev[0].mods.precise, 0);

	CHECK_EQ(parse("cpu-clock:u"), 0);
	CHECK(strcmp(ev[0].name, "cpu-clock:u") == 0);
	CHECK(strcmp(ev[0].base, "cpu-clock") == 0);
	CHECK_EQ(ev[0].mods.user, 1);
	CHECK_EQ(ev[0].mods.kernel, 0);

	CHECK_EQ(parse("task-clock:ukppp"), 0);
	CHECK_EQ(ev[0].mods.user, 1);
	CHECK_EQ(ev[0].mods.kernel, 1);
	CHECK_EQ(ev[0].mods.precise, 3);

	CHECK_EQ(parse("cycles:Pk"), 0);
	CHECK_EQ(ev[0].mods.max_precise, 1);
	CHECK_EQ(parse("cs:hGHID"), 0);
	CHECK_EQ(ev[0].mods.hv + ev[0].mods.guest + ev[0].mods.host +
	    ev[0].mods.no_idle + ev[0].mods.pinned, 5);

	bad("cpu-clock:x", "bad modifier 'x'");
	bad("cpu-clock:pppp", "at most ppp");
	bad("cpu-clock:", "modifier is expected");
	bad("cpu-clok", "unknown event 'cpu-clok'");
	bad("cpu clock", "not an event name");
}

static void
test_tracepoints(void)
{
	CHECK_EQ(parse("sched:sched_switch"), 0);
	CHECK_EQ(ev[0].kind, EVPARSE_TRACEPOINT);
	CHECK(strcmp(ev[0].base, "sched:sched_switch") == 0);
	/* perf names a tracepoint without its modifiers */
	CHECK_EQ(parse("sched:sched_switch:k"), 0);
	CHECK(strcmp(ev[0].name, "sched:sched_switch") == 0);
	CHECK_EQ(ev[0].mods.kernel, 1);
	bad("sched:", "written system:name");
	bad("sched:*", "globs are not supported");
	bad("sched:sched_switch:q", "bad modifier 'q'");
	bad("../x:y", "not a PMU name");
	bad("..:y", "not an event name");
}

static void
test_raw(void)
{
	uint64_t	 v;

	CHECK_EQ(parse("r1a8"), 0);
	CHECK_EQ(ev[0].kind, EVPARSE_RAW);
	CHECK_EQ(ev[0].raw, 0x1a8);
	CHECK(strcmp(ev[0].name, "r1a8") == 0);
	CHECK_EQ(parse("rC0:u"), 0);
	CHECK_EQ(ev[0].raw, 0xc0);
	CHECK_EQ(ev[0].mods.user, 1);
	/* ref-cycles is a symbol, not raw "ef-cycles" */
	CHECK_EQ(parse("ref-cycles"), 0);
	CHECK_EQ(ev[0].kind, EVPARSE_SYMBOL);
	bad("r12345678901234567", "above 64 bits");
	bad("rxyz", "unknown event 'rxyz'");
	CHECK_EQ(evparse_number("0x3c", &v), 0);
	CHECK_EQ(v, 0x3c);
	CHECK_EQ(evparse_number("17", &v), 0);
	CHECK_EQ(v, 17);
	CHECK_EQ(evparse_number("x", &v), -1);
	CHECK_EQ(evparse_number("1k", &v), -1);
}

static void
test_pmu(void)
{
	CHECK_EQ(parse("software/config=0,period=10000/u"), 0);
	CHECK_EQ(nev, 1);
	CHECK_EQ(ev[0].kind, EVPARSE_PMU);
	CHECK(strcmp(ev[0].name, "software/config=0,period=10000/u") == 0);
	CHECK(strcmp(ev[0].base, "software") == 0);
	CHECK_EQ(ev[0].nr_terms, 2);
	CHECK(strcmp(ev[0].terms[0].name, "config") == 0);
	CHECK(strcmp(ev[0].terms[0].value, "0") == 0);
	CHECK(strcmp(ev[0].terms[1].name, "period") == 0);
	CHECK(strcmp(ev[0].terms[1].value, "10000") == 0);
	CHECK_EQ(ev[0].mods.user, 1);

	CHECK_EQ(parse("msr/tsc/"), 0);
	CHECK_EQ(ev[0].nr_terms, 1);
	CHECK(strcmp(ev[0].terms[0].name, "tsc") == 0);
	CHECK_EQ(ev[0].terms[0].has_value, 0);
	CHECK_EQ(parse("cpu//"), 0);
	CHECK_EQ(ev[0].nr_terms, 0);

	bad("msr/event=1", "ends in '/'");
	bad("msr/event=/", "not a term");
	bad("msr/event=1,/", "term is expected");
	bad("m sr/event=1/", "not a PMU name");
	/* perf's parser refuses a ':' after a PMU event's slash */
	bad("software/config=0/:u", "bad modifier ':'");
}

static void
test_lists_and_groups(void)
{
	CHECK_EQ(parse("cpu-clock,task-clock:k"), 0);
	CHECK_EQ(nev, 2);
	CHECK_EQ(ev[0].leader_off + ev[1].leader_off, 0);
	CHECK(strcmp(ev[1].name, "task-clock:k") == 0);

	CHECK_EQ(parse("{cpu-clock,task-clock}:u"), 0);
	CHECK_EQ(nev, 2);
	CHECK_EQ(ev[0].leader_off, 0);
	CHECK_EQ(ev[1].leader_off, 1);
	/* the group's modifiers apply; perf names members without them */
	CHECK(strcmp(ev[1].name, "task-clock") == 0);
	CHECK_EQ(ev[0].mods.user, 1);
	CHECK_EQ(ev[1].mods.user, 1);

	CHECK_EQ(parse("cs,{cpu-clock,msr/event=0,x=1/,sched:sched_switch},"
	    "page-faults"), 0);
	CHECK_EQ(nev, 5);
	CHECK_EQ(ev[0].leader_off, 0);
	CHECK_EQ(ev[1].leader_off, 0);
	CHECK_EQ(ev[2].leader_off, 1);
	CHECK_EQ(ev[3].leader_off, 2);
	CHECK_EQ(ev[4].leader_off, 0);
	CHECK(strcmp(ev[2].name, "msr/event=0,x=1/") == 0);

	bad("{cpu-clock,task-clock", "ends in '}'");
	bad("{cpu-clock,}", "an event is expected");
	bad("{}", "an event is expected");
	bad("{cpu-clock}u", "follow '}:'");
	bad("{a,{b}}", "cannot hold a group");
	bad("cpu-clock,", "an event is expected");
	bad(",cpu-clock", "an event is expected");

	CHECK_EQ(evparse_item("{a,b}:u,c"), 7);
	CHECK_EQ(evparse_item("msr/event=1,umask=2/,c"), 20);
	CHECK_EQ(evparse_item("a,b"), 1);
	CHECK_EQ(evparse_item("abc"), 3);
}

static void
test_bounds(void)
{
	char	 s[EVPARSE_MAX_EVENTS * 4 + 8], *p = s;
	size_t	 i;

	for (i = 0; i <= EVPARSE_MAX_EVENTS; i++)
		p += sprintf(p, "%scs", i ? "," : "");
	bad(s, "more than 16 events");
	memset(s, 'a', sizeof s);
	s[sizeof s - 1] = '\0';
	memcpy(s, "sched:", 6);
	CHECK_EQ(parse(s), 0);	/* 71 bytes: within the name's bound */
}

int
main(void)
{
	test_symbols();
	test_tracepoints();
	test_raw();
	test_pmu();
	test_lists_and_groups();
	test_bounds();
	return check_exit();
}
