/*
 * test-perfdata: perfdata_valid_end, which decides where salvage cuts a
 * file the daemon left behind: after the last whole record, never inside
 * one, and never past the zeros of a write that did not land; and where
 * a sample's pid and time are.
 */
#include <stdint.h>
#include <string.h>
#include <linux/perf_event.h>

#include "check.h"
#include "perfdata/perf-abi.h"
#include "perfdata/perfdata.h"

#define PIPE	PERFDATA_PIPE_HEADER_LEN

static uint8_t	buf[1024];

/* A record of type and size at off, its body (what buf holds of it)
 * filled with fill. */
static uint64_t
rec(uint64_t off, uint32_t type, uint16_t size, uint8_t fill)
{
	struct perf_event_header	 h = { type, 0, size };

	memset(buf + off, fill, size < sizeof(buf) - off ? size :
	    sizeof(buf) - off);
	memcpy(buf + off, &h, sizeof(h));
	return off + size;
}

static void
test_whole(void)
{
	uint64_t	 end, nr = 0;

	memset(buf, 0, sizeof(buf));
	/* from the data section's start (here 104), not from 0 */
	memset(buf, 0xff, 104);
	end = rec(104, PERF_RECORD_SAMPLE, 32, 1);
	end = rec(end, PERF_RECORD_MMAP2, 96, 2);
	end = rec(end, PERF_RECORD_FINISHED_ROUND, 8, 0);
	CHECK_U64(perfdata_valid_end(buf, end, 104, &nr), end);
	CHECK_U64(nr, 3);
	CHECK_U64(perfdata_valid_end(buf, 104, 104, NULL), 104);

	/* cut inside the last record, inside its header, just after it */
	CHECK_U64(perfdata_valid_end(buf, end - 1, 104, NULL), end - 8);
	CHECK_U64(perfdata_valid_end(buf, 104 + 32 + 50, 104, NULL), 104 + 32);
	CHECK_U64(perfdata_valid_end(buf, 104 + 32 + 4, 104, NULL), 104 + 32);
	CHECK_U64(perfdata_valid_end(buf, 104 + 31, 104, NULL), 104);
}

static void
test_garbage(void)
{
	uint64_t	 a, end;

	/* zeros: space reserved for a write that never landed */
	memset(buf, 0, sizeof(buf));
	a = rec(0, PERF_RECORD_SAMPLE, 32, 1);
	end = rec(a + 64, PERF_RECORD_SAMPLE, 32, 1);
	CHECK_U64(perfdata_valid_end(buf, end, 0, NULL), a);

	/* a size below a header's, not a multiple of 8, past the end; a
	 * type no kernel or perf uses */
	rec(a, PERF_RECORD_SAMPLE, 4, 1);
	CHECK_U64(perfdata_valid_end(buf, end, 0, NULL), a);
	rec(a, PERF_RECORD_SAMPLE, 36, 1);
	CHECK_U64(perfdata_valid_end(buf, end, 0, NULL), a);
	rec(a, PERF_RECORD_SAMPLE, 1000, 1);
	CHECK_U64(perfdata_valid_end(buf, 1024, 0, NULL), a);
	rec(a, 200, 32, 1);
	CHECK_U64(perfdata_valid_end(buf, end, 0, NULL), a);
}

static void
test_compressed(void)
{
	uint64_t	 end;

	/* perf's -z records need not be 8-aligned, and what follows them
	 * is read from where they end */
	memset(buf, 0, sizeof(buf));
	end = rec(0, PERF_RECORD_COMPRESSED, 8 + 29, 3);
	end = rec(end, PERF_RECORD_SAMPLE, 32, 1);
	CHECK_U64(perfdata_valid_end(buf, end, 0, NULL), end);
	CHECK_U64(perfdata_valid_end(buf, end - 1, 0, NULL), 37);
}

static void
test_tracing_data(void)
{
	uint64_t	 end, after;
	uint32_t	 tsize = 21;

	/*
	 * A pipe file's HEADER_TRACING_DATA: a 16-byte record whose u32
	 * says how much tracing data follows it, padded to 8 (21 -> 24).
	 */
	memset(buf, 0, sizeof(buf));
	end = rec(PERFDATA_PIPE_HEADER_LEN, PERF_RECORD_HEADER_TRACING_DATA,
	    16, 0);
	memcpy(buf + PERFDATA_PIPE_HEADER_LEN + 8, &tsize, sizeof(tsize));
	memset(buf + end, 0x17, tsize);
	after = rec(end + 24, PERF_RECORD_SAMPLE, 32, 1);
	CHECK_U64(perfdata_valid_end(buf, after, PIPE, NULL),
	    after);
	/* the data cut short: the record is not whole without it */
	CHECK_U64(perfdata_valid_end(buf, end + 20, PIPE, NULL),
	    PERFDATA_PIPE_HEADER_LEN);
	CHECK_U64(perfdata_valid_end(buf, end + 24, PIPE, NULL),
	    end + 24);
	/* too short to hold the size */
	rec(PERFDATA_PIPE_HEADER_LEN, PERF_RECORD_HEADER_TRACING_DATA, 8, 0);
	CHECK_U64(perfdata_valid_end(buf, after, PIPE, NULL),
	    PERFDATA_PIPE_HEADER_LEN);
}

/* Where the pid and the time of a sample are: each field before them is
 * one u64, present or not by its bit. */
static void
test_sample_offsets(void)
{
	uint64_t	 all = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			    PERF_SAMPLE_TID | PERF_SAMPLE_TIME;

	CHECK_U64(perfdata_pid_off(all), 8 + 8 + 8);
	CHECK_U64(perfdata_time_off(all), 8 + 8 + 8 + 8);
	CHECK_U64(perfdata_pid_off(all & ~PERF_SAMPLE_IDENTIFIER), 8 + 8);
	CHECK_U64(perfdata_pid_off(PERF_SAMPLE_TID), 8);
	CHECK_U64(perfdata_pid_off(all & ~PERF_SAMPLE_TID), 0);
	CHECK_U64(perfdata_time_off(all & ~PERF_SAMPLE_TID), 8 + 8 + 8);
	CHECK_U64(perfdata_time_off(all & ~PERF_SAMPLE_TIME), 0);
	/* a task record's sample_id: pid/tid, time, id, stream_id, cpu,
	 * identifier; the daemon's (identifier, tid, time, cpu) puts the
	 * time 24 bytes before the end */
	CHECK_U64(perfdata_id_time_back(PERF_SAMPLE_IDENTIFIER |
	    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN), 24);
	CHECK_U64(perfdata_id_time_back(PERF_SAMPLE_TID | PERF_SAMPLE_TIME),
	    8);
	CHECK_U64(perfdata_id_time_back(PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
	    PERF_SAMPLE_STREAM_ID), 24);
	CHECK_U64(perfdata_id_time_back(all & ~PERF_SAMPLE_TIME), 0);
}

int
main(void)
{
	test_sample_offsets();
	test_whole();
	test_garbage();
	test_compressed();
	test_tracing_data();
	return check_exit();
}
