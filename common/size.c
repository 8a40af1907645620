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

/* v in its unit with decimals digits after the point; bytes whole. */
static char *
size_format_prec(uint64_t v, int decimals, char *buf, size_t len)
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
		snprintf(buf, len, "%.*f %s", decimals, d, unit[i]);
	return buf;
}

char *
size_format(uint64_t v, char *buf, size_t len)
{
	return size_format_prec(v, 1, buf, len);
}

/*
 * Two sizes side by side ("23.48 GiB: 23.54 GiB less 64.0 MiB") must not
 * read the same when they differ: the fewest decimals (1 to 6) at which
 * v and other differ, the same for both orders of the pair.
 */
char *
size_format_apart(uint64_t v, uint64_t other, char *buf, size_t len)
{
	char	 a[64], b[64];
	int	 d;

	for (d = 1; d < 6; d++)
		if (strcmp(size_format_prec(v, d, a, sizeof(a)),
		    size_format_prec(other, d, b, sizeof(b))) != 0)
			break;
	return size_format_prec(v, d, buf, len);
}
