/*
 * size: parse and format sizes and durations (see size.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "size.h"

static int
size_parse_suffixed(const char *s, uint64_t *out, const char *suffixes,
    const uint64_t *mult, int bytes)
{
	char			*end;
	unsigned long long	 v;
	const char		*p;

	if (s == NULL || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	if (*end != '\0') {
		if ((p = strchr(suffixes, toupper((unsigned char)*end))) == NULL ||
		    *p == '\0')
			return -1;
		/* accept "512M", "512MB", "512MiB" */
		if (end[1] != '\0' && (!bytes || (strcmp(end + 1, "B") != 0 &&
		    strcmp(end + 1, "iB") != 0 && strcmp(end + 1, "b") != 0)))
			return -1;
		if (v > UINT64_MAX / mult[p - suffixes])
			return -1;
		v *= mult[p - suffixes];
	}
	*out = v;
	return 0;
}

int
size_parse(const char *s, uint64_t *out)
{
	static const uint64_t mult[] = { 1ULL << 10, 1ULL << 20, 1ULL << 30,
	    1ULL << 40 };

	return size_parse_suffixed(s, out, "KMGT", mult, 1);
}

int
size_parse_secs(const char *s, uint64_t *out)
{
	static const uint64_t mult[] = { 1, 60, 3600, 86400 };

	return size_parse_suffixed(s, out, "SMHD", mult, 0);
}

char *
size_format(uint64_t v, char *buf, size_t len)
{
	static const char	*unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double			 d = (double)v;
	size_t			 i = 0;

	while (d >= 1024 && i < sizeof(unit) / sizeof(unit[0]) - 1) {
		d /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)v);
	else
		snprintf(buf, len, "%.1f %s", d, unit[i]);
	return buf;
}
