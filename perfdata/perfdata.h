/*
 * perfdata: the seekable perf.data layout of our trace files (see
 * docs/file-format.md), the part that both the daemon's close of a file
 * and the salvage of a crashed one need.
 *
 * A file is written in two steps. When it opens, synth writes its head:
 * a provisional file header (data size 0), the attrs with their ids, the
 * payloads of the features known then, and a table of those features
 * that ends exactly where the data section starts. Data records follow
 * from there at reserved offsets. perfdata_finish then writes the
 * feature table perf reads (at the end of the data) with the payloads
 * learnt while recording, and last the final header at offset 0. The
 * head alone is enough to finish a file again: salvage does just that.
 */
#ifndef PERFSPILL_PERFDATA_H
#define PERFSPILL_PERFDATA_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata/perf-abi.h"

struct perfdata_section {
	uint64_t	 offset;
	uint64_t	 size;
};

/* perf_file_header, as it lies at offset 0. */
struct perfdata_header {
	uint64_t		 magic;
	uint64_t		 size;		/* of this header: 104 */
	uint64_t		 attr_size;	/* of one attr + its ids section */
	struct perfdata_section	 attrs;
	struct perfdata_section	 data;
	struct perfdata_section	 event_types;	/* unused, zero */
	uint64_t		 features[PERFDATA_FEAT_BITS / 64];
};

/* What a file's head says: its header and where its features lie. */
struct perfdata_layout {
	struct perfdata_header	 hdr;
	struct perfdata_section	 feat[PERFDATA_FEAT_MAX];	/* size 0: none */
};

/* What was learnt while recording; a zero field leaves the head's. */
struct perfdata_extra {
	const uint8_t	*build_ids;	/* HEADER_BUILD_ID records */
	size_t		 build_ids_len;
	uint64_t	 first_sample;	/* perf time; 0: unknown */
	uint64_t	 last_sample;
	uint32_t	 comp_ratio;	/* records' bytes / compressed, rounded */
};

int	 perfdata_feat_isset(const struct perfdata_header *, unsigned int);
void	 perfdata_feat_set(struct perfdata_header *, unsigned int);

/* Read the head of a file (buf holds at least its first len bytes):
 * the header and the table of the features written with it. 0, or -1
 * when it is not one of our heads. */
int	 perfdata_parse(const uint8_t *buf, uint64_t len,
	    struct perfdata_layout *);

/* Feature id's section of a finished file (map holds its size bytes):
 * perf's table follows the data, one entry per feature set, in order.
 * 0, or -1 when it has none or the entry points outside the file. */
int	 perfdata_feat_find(const uint8_t *map, uint64_t size,
	    const struct perfdata_header *, unsigned int id,
	    struct perfdata_section *);

/* The end of the last whole record of the records from off in
 * buf[0..len), by their headers alone (perfcheck.h reads their bodies):
 * where a pipe-format file whose writes stopped at random may be cut.
 * *nr (if not NULL) counts the records passed. */
uint64_t perfdata_valid_end(const uint8_t *buf, uint64_t len, uint64_t off,
	    uint64_t *nr);

/* Where a sample's pid lies for this sample_type: after its id and ip;
 * 0 when samples carry no pid. */
size_t	 perfdata_pid_off(uint64_t sample_type);
/* Where a sample's time lies for this sample_type: after its id, ip and
 * pid/tid; 0 when samples carry no time. */
size_t	 perfdata_time_off(uint64_t sample_type);
/* Where a record other than a sample carries its time in its sample_id
 * (sample_id_all): this many bytes before its end; 0 when it carries
 * none. */
size_t	 perfdata_id_time_back(uint64_t sample_type);

/* Widen [*first, *last] (0: empty) to the times of the samples among the
 * records from buf's start. Returns where the walk stopped: len, or the
 * start of a record cut by the end of buf. */
size_t	 perfdata_sample_times(const uint8_t *buf, size_t len,
	    size_t time_off, uint64_t *first, uint64_t *last);

/*
 * Make fd a finished perf.data file whose data section ends at
 * data_end: the feature table and the extra payloads at data_end, the
 * file cut after them, then the header. Small synchronous writes; the
 * caller fsyncs. 0 and the file's size in *size (if not NULL), or -1
 * with errno.
 */
int	 perfdata_finish(int fd, const struct perfdata_layout *,
	    uint64_t data_end, const struct perfdata_extra *, uint64_t *size);
/* len bytes of buf at off of fd, through short writes and EINTR. 0, or
 * -1 with errno (ENOSPC for a write that took nothing). */
int	 perfdata_pwrite(int fd, const void *buf, size_t len, uint64_t off);

#endif
