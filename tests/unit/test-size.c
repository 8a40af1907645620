/*
 * test-size: size_parse, size_parse_secs and size_format. Operators type
 * these into the config file and perfspillctl, so what is refused matters
 * as much as what is accepted.
 */
#include <stdint.h>

#include "check.h"
#include "size.h"

static void
test_size_parse(void)
{
	uint64_t	 v;

	v = 7;
	CHECK(size_parse("0", &v) == 0 && v == 0);
	CHECK(size_parse("4096", &v) == 0 && v == 4096);
	CHECK(size_parse("64K", &v) == 0 && v == UINT64_C(64) << 10);
	CHECK(size_parse("64k", &v) == 0 && v == UINT64_C(64) << 10);
	CHECK(size_parse("512M", &v) == 0 && v == UINT64_C(512) << 20);
	CHECK(size_parse("2G", &v) == 0 && v == UINT64_C(2) << 30);
	CHECK(size_parse("1T", &v) == 0 && v == UINT64_C(1) << 40);
	CHECK(size_parse("512MiB", &v) == 0 && v == UINT64_C(512) << 20);
	CHECK(size_parse("512MB", &v) == 0 && v == UINT64_C(512) << 20);
	CHECK(size_parse("3GiB", &v) == 0 && v == UINT64_C(3) << 30);
	CHECK(size_parse("18446744073709551615", &v) == 0 &&
	    v == UINT64_MAX);

	/* a failed parse leaves the output alone */
	v = 42;
	CHECK(size_parse("", &v) == -1);
	CHECK(size_parse(NULL, &v) == -1);
	CHECK(size_parse("M", &v) == -1);
	CHECK(size_parse("-1", &v) == -1);
	CHECK(size_parse("+1", &v) == -1);
	CHECK(size_parse(" 1", &v) == -1);
	CHECK(size_parse("1 M", &v) == -1);
	CHECK(size_parse("1X", &v) == -1);
	CHECK(size_parse("1P", &v) == -1);
	CHECK(size_parse("1MM", &v) == -1);
	CHECK(size_parse("1MiBs", &v) == -1);
	CHECK(size_parse("1KIB", &v) == -1);
	CHECK(size_parse("1.5G", &v) == -1);
	CHECK(size_parse("12abc", &v) == -1);
	CHECK(v == 42);

	/* overflow, of the number itself and of the multiplication */
	CHECK(size_parse("18446744073709551616", &v) == -1);
	CHECK(size_parse("99999999999999999999999", &v) == -1);
	CHECK(size_parse("16777216T", &v) == -1);	/* 2^64 */
	CHECK(size_parse("17179869184G", &v) == -1);	/* 2^64 */
	CHECK(size_parse("18014398509481984K", &v) == -1);	/* 2^64 */
	CHECK(size_parse("16777215T", &v) == 0 &&
	    v == (UINT64_C(16777215) << 40));
	CHECK(v != 42);
}

static void
test_size_parse_secs(void)
{
	uint64_t	 v;

	CHECK(size_parse_secs("0", &v) == 0 && v == 0);
	CHECK(size_parse_secs("30", &v) == 0 && v == 30);
	CHECK(size_parse_secs("30s", &v) == 0 && v == 30);
	CHECK(size_parse_secs("15m", &v) == 0 && v == 15 * 60);
	CHECK(size_parse_secs("2h", &v) == 0 && v == 2 * 3600);
	CHECK(size_parse_secs("1d", &v) == 0 && v == 86400);
	CHECK(size_parse_secs("2H", &v) == 0 && v == 2 * 3600);

	v = 42;
	CHECK(size_parse_secs("", &v) == -1);
	CHECK(size_parse_secs("h", &v) == -1);
	CHECK(size_parse_secs("1w", &v) == -1);
	CHECK(size_parse_secs("1y", &v) == -1);
	CHECK(size_parse_secs("-5s", &v) == -1);
	CHECK(size_parse_secs("10ms", &v) == -1);
	CHECK(size_parse_secs("1hB", &v) == -1);	/* byte suffixes only */
	CHECK(size_parse_secs("1K", &v) == -1);
	CHECK(size_parse_secs("213503982334602d", &v) == -1);	/* > 2^64 s */
	CHECK(v == 42);
}

static void
test_size_format(void)
{
	char	 buf[32];

	CHECK_STR(size_format(0, buf, sizeof(buf)), "0 B");
	CHECK_STR(size_format(1023, buf, sizeof(buf)), "1023 B");
	CHECK_STR(size_format(1024, buf, sizeof(buf)), "1.0 KiB");
	CHECK_STR(size_format(1536, buf, sizeof(buf)), "1.5 KiB");
	CHECK_STR(size_format(UINT64_C(3) << 19, buf, sizeof(buf)), "1.5 MiB");
	CHECK_STR(size_format(UINT64_C(512) << 20, buf, sizeof(buf)),
	    "512.0 MiB");
	CHECK_STR(size_format(UINT64_C(4) << 30, buf, sizeof(buf)), "4.0 GiB");
	CHECK_STR(size_format(UINT64_C(1) << 40, buf, sizeof(buf)), "1.0 TiB");
	/* TiB is the largest unit: bigger values grow the number */
	CHECK_STR(size_format(UINT64_C(1) << 50, buf, sizeof(buf)),
	    "1024.0 TiB");
	/* returns buf, and never writes past len */
	CHECK(size_format(1024, buf, sizeof(buf)) == buf);
	memset(buf, 'x', sizeof(buf));
	size_format(UINT64_C(512) << 20, buf, 4);
	CHECK_STR(buf, "512");
	CHECK(buf[4] == 'x');
}

/* A budget beside the memory it is taken from: 64 MiB apart must show. */
static void
test_size_format_apart(void)
{
	uint64_t	 mem = UINT64_C(25276071936), res = UINT64_C(64) << 20;
	char		 a[32], b[32];

	/* what status printed: "23.5 GiB (... 23.5 GiB less 64.0 MiB)" */
	CHECK_STR(size_format(mem, a, sizeof(a)), "23.5 GiB");
	CHECK_STR(size_format(mem - res, b, sizeof(b)), "23.5 GiB");
	CHECK_STR(size_format_apart(mem, mem - res, a, sizeof(a)),
	    "23.54 GiB");
	CHECK_STR(size_format_apart(mem - res, mem, b, sizeof(b)),
	    "23.48 GiB");
	/* already apart: as size_format */
	CHECK_STR(size_format_apart(UINT64_C(1) << 30, (UINT64_C(1) << 30) -
	    res, a, sizeof(a)), "1.0 GiB");
	CHECK_STR(size_format_apart((UINT64_C(1) << 30) - res,
	    UINT64_C(1) << 30, a, sizeof(a)), "960.0 MiB");
	/* 64 MiB below 2 TiB shows at the fourth decimal */
	CHECK_STR(size_format_apart(UINT64_C(2) << 40, (UINT64_C(2) << 40) -
	    res, a, sizeof(a)), "2.0000 TiB");
	CHECK_STR(size_format_apart((UINT64_C(2) << 40) - res,
	    UINT64_C(2) << 40, a, sizeof(a)), "1.9999 TiB");
	/* equal: the most decimals, no endless search */
	CHECK_STR(size_format_apart(1536, 1536, a, sizeof(a)), "1.500000 KiB");
	CHECK_STR(size_format_apart(100, 101, a, sizeof(a)), "100 B");
}

int
main(void)
{
	test_size_parse();
	test_size_parse_secs();
	test_size_format();
	test_size_format_apart();
	return check_exit();
}
