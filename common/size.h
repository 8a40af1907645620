/*
 * size: byte sizes and durations as operators write them ("512M", "1G",
 * "90s", "1h") and as status shows them.
 */
#ifndef PERFSPILL_SIZE_H
#define PERFSPILL_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* "4096", "64K", "512M", "2G", "1T" (binary multiples). 0 or -1. */
int	size_parse(const char *, uint64_t *);
/* "30", "30s", "15m", "2h", "1d" to seconds. 0 or -1. */
int	size_parse_secs(const char *, uint64_t *);
/* Human form: "1.5 MiB". Returns buf. */
char	*size_format(uint64_t, char *, size_t);
/* size_format with as many decimals (up to 6) as it takes for the first
 * not to read as the second when they differ: "23.48 GiB" beside
 * "23.54 GiB", not "23.5 GiB" twice. Returns buf. */
char	*size_format_apart(uint64_t, uint64_t other, char *, size_t);

#endif
