/*
 * test-otlp: the OTLP encoder (flame/otlp.c) and the container id a
 * cgroup path names (flame/otlpout.c). What is interned is interned once
 * (equal mappings, functions, attributes and stacks are one entry; a
 * location is known by its mapping and address, a frame at 0 of no
 * mapping included), each table's index 0 is its zero value, and a
 * sample added again appends its value and time.
 *
 * test-otlp OUT also writes a synthetic request for a real reader
 * (test-otlp-decode.sh runs protoc --decode on it against the vendored
 * schema): two resources, three profiles, an integer attribute of 0, a
 * repeated sample, a frame in no mapping.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "otlp.h"
#include "otlpout.h"

static const struct otlp_type cpu = { "cpu", "nanoseconds", "cpu",
    "nanoseconds", 0 };
static const struct otlp_type count = { "samples", "count", NULL, NULL, 0 };

static struct otlp *
synthetic(void)
{
	static const struct otlp_map	 app = { 0x400000, 0x401000, 0,
	    "/usr/bin/app", "0123456789abcdef0123456789abcdef01234567" };
	static const struct otlp_map	 app2 = { 0x400000, 0x401000, 0,
	    "/usr/bin/app", "0123456789abcdef0123456789abcdef01234567" };
	struct otlp_attr		 host[2] = { { "host.name", "a", 0 },
					     { "os.type", "linux", 0 } };
	struct otlp_attr		 hostb = { "host.name", "b", 0 };
	struct otlp_attr		 pid0 = { "process.pid", NULL, 0 };
	struct otlp_attr		 pid7 = { "process.pid", NULL, 7 };
	struct otlp_attr		 pid7b = { "process.pid", NULL, 7 };
	struct otlp_attr		 evil = { "process.executable.name",
					     "\xff\xfe;a\nb\xed\xa0\x80", 0 };
	struct otlp			*ot = otlp_create("test", "1");
	uint32_t			 m, m2, l1, l2, l0, s1, s2, a0, a7;
	uint64_t			 locs[3];
	int64_t				 r0, r1, p0, p1, p2;

	if (ot == NULL)
		return NULL;
	r0 = otlp_resource(ot, "a", host, 2);
	r1 = otlp_resource(ot, "b", &hostb, 1);
	CHECK_EQ(otlp_resource(ot, "a", NULL, 0), r0);
	CHECK(r0 == 0 && r1 == 1);
	p0 = otlp_profile(ot, 0, "cpu-clock", &cpu);
	p1 = otlp_profile(ot, 0, "page-faults", &count);
	p2 = otlp_profile(ot, 1, "cpu-clock", &cpu);
	CHECK(p0 == 0 && p1 == 1 && p2 == 2);
	CHECK_EQ(otlp_profile(ot, 0, "cpu-clock", &cpu), p0);
	m = otlp_mapping(ot, &app);
	m2 = otlp_mapping(ot, &app2);
	CHECK(m != 0);
	CHECK_EQ(m2, m);		/* equal by value: one entry */
	l1 = otlp_location(ot, m, 0x400100, (const char *[]){ "main" },
	    1, 0);
	l2 = otlp_location(ot, m, 0x400200, (const char *[]){ "leaf" },
	    1, 0);
	l0 = otlp_location(ot, 0, 0, (const char *[]){ "[unknown]" },
	    1, 0);
	CHECK(l1 != 0 && l2 != 0 && l0 != 0 && l0 != l1 && l1 != l2);
	CHECK_EQ(otlp_location_find(ot, m, 0x400100), l1);
	CHECK_EQ(otlp_location_find(ot, 0, 0), l0);
	CHECK_EQ(otlp_location_find(ot, m, 0x400300), 0);
	locs[0] = l2;
	locs[1] = l1;
	s1 = otlp_stack(ot, locs, 2);
	CHECK_EQ(otlp_stack(ot, locs, 2), s1);
	locs[0] = l0;
	locs[1] = l2;
	locs[2] = l1;
	s2 = otlp_stack(ot, locs, 3);
	CHECK(s1 != 0 && s2 != 0 && s1 != s2);
	a0 = otlp_attribute(ot, &pid0);
	a7 = otlp_attribute(ot, &pid7);
	CHECK(a0 != 0 && a7 != 0 && a0 != a7);
	CHECK_EQ(otlp_attribute(ot, &pid7b), a7);
	/* a comm and a function name hold any bytes: the request carries
	 * them as UTF-8, each byte that starts no sequence as U+FFFD */
	CHECK(otlp_attribute(ot, &evil) != 0);
	CHECK(otlp_location(ot, m, 0x400300, (const char *[]){
	    "cut\xc3\xa9\xe2\x82" }, 1, 0) != 0);
	CHECK(otlp_sample(ot, 0, s1, &a7, 1, 1000, 1764856800000000000ULL) ==
	    0);
	CHECK(otlp_sample(ot, 0, s1, &a7, 1, 2000, 1764856800100000000ULL) ==
	    0);
	CHECK(otlp_sample(ot, 0, s2, &a0, 1, 3000, 1764856800200000000ULL) ==
	    0);
	CHECK(otlp_sample(ot, 1, s1, &a7, 1, 1, 1764856800300000000ULL) == 0);
	CHECK(otlp_sample(ot, 2, s2, &a7, 1, 5, 1764856800400000000ULL) == 0);
	CHECK(otlp_sample(ot, 9, s2, &a7, 1, 5, 1) == -1);
	CHECK_EQ(otlp_samples(ot), 5);
	return ot;
}

static void
test_container(void)
{
	static const char	 id[] = "0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	char			 buf[80], path[256];

	snprintf(path, sizeof(path), "/system.slice/docker-%s.scope", id);
	CHECK(otlpout_container(path, buf, sizeof(buf)) == 0 &&
	    strcmp(buf, id) == 0);
	snprintf(path, sizeof(path), "/kubepods.slice/kubepods-burstable.slice/"
	    "kubepods-burstable-pod1234.slice/cri-containerd-%s.scope", id);
	CHECK(otlpout_container(path, buf, sizeof(buf)) == 0 &&
	    strcmp(buf, id) == 0);
	snprintf(path, sizeof(path), "/docker/%s", id);
	CHECK(otlpout_container(path, buf, sizeof(buf)) == 0 &&
	    strcmp(buf, id) == 0);
	/* 63 or 65 digits, uppercase, or none: no container */
	CHECK(otlpout_container("/user.slice/user-0.slice/session-3.scope",
	    buf, sizeof(buf)) == -1);
	snprintf(path, sizeof(path), "/docker/%.63s", id);
	CHECK(otlpout_container(path, buf, sizeof(buf)) == -1);
	snprintf(path, sizeof(path), "/docker/%sa", id);
	CHECK(otlpout_container(path, buf, sizeof(buf)) == -1);
	CHECK(otlpout_container("", buf, sizeof(buf)) == -1);
	CHECK(otlpout_container(id, buf, 10) == -1);
}

int
main(int argc, char **argv)
{
	struct otlp	*ot = synthetic();
	uint8_t		*raw = NULL;
	size_t		 len = 0;
	FILE		*f;

	CHECK(ot != NULL);
	if (ot != NULL) {
		CHECK(otlp_encode(ot, &raw, &len) == 0 && len > 0);
		/* the request starts with its first resource's profiles */
		CHECK(len > 2 && raw[0] == (1 << 3 | 2));
		CHECK(memmem(raw, len, "\xef\xbf\xbd\xef\xbf\xbd;a\nb"
		    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 19) != NULL);
		CHECK(memmem(raw, len, "cut\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd",
		    11) != NULL);
	}
	test_container();
	if (argc > 1 && raw != NULL) {
		if ((f = fopen(argv[1], "we")) == NULL ||
		    fwrite(raw, 1, len, f) != len || fclose(f) != 0) {
			perror(argv[1]);
			return 1;
		}
	}
	free(raw);
	otlp_free(ot);
	return check_exit();
}
