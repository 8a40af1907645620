/*
 * ring maps one perf mmap ring (1 metadata page + 2^n data pages) and
 * does the arithmetic of reading it. The kernel writes at data_head; we
 * own data_tail. A read loads head (acquire), copies [tail, head) in at
 * most two spans because the data area wraps, and stores tail (release)
 * so that the kernel may reuse the space.
 *
 * Threads: a ring is read and released by the drain (the drain thread,
 * or the loop under the recording's lock); the loop maps and unmaps it
 * while the drain thread does not watch it. The functions on a buffer
 * rather than a ring keep no state: any thread.
 */
#ifndef PERFSPILL_RING_H
#define PERFSPILL_RING_H

#include <stddef.h>
#include <stdint.h>

struct ring;

struct ring_span {
	size_t	off[2];		/* offsets into the data area */
	size_t	len[2];		/* len[1] is 0 unless the data wraps */
};

/*
 * The spans holding [tail, head) of a data area of size bytes (a power of
 * two). Returns the byte count, or -1 when head is behind tail or more than
 * size ahead of it, which a correct kernel never produces.
 */
int64_t	ring_span(uint64_t head, uint64_t tail, size_t size,
	    struct ring_span *);

/* Count what [tail, head) holds, walking record headers with wrap-around. */
struct ring_counts {
	uint64_t	records;
	uint64_t	samples;
	uint64_t	lost;		/* sum of PERF_RECORD_LOST.lost */
	uint64_t	lost_samples;	/* sum of PERF_RECORD_LOST_SAMPLES.lost */
	uint64_t	bad;		/* a record header of size 0 or too big */
	uint64_t	self;		/* samples of the excluded pid, not kept */
};
/* The samples of pid (its u32 at pid_off in a sample; pid_off 0: none)
 * are counted as self instead of as records and samples. */
void	ring_count_excl(const uint8_t *data, size_t size, uint64_t tail,
	    uint64_t head, struct ring_counts *, uint32_t pid, size_t pid_off);
/*
 * What a pass over a drained copy does besides counting: drop the
 * samples of pid, note the times of the samples kept, and hand each MMAP2
 * record to mmap2 (writable: it may repair it). One pass for all of it:
 * the first walk over data fresh from the ring pays its cache misses,
 * and the drain of a busy ring is mostly walks (the copy streams).
 */
struct ring_filter {
	uint32_t	 pid;
	size_t		 pid_off;	/* of pid in a sample; 0: keep all */
	size_t		 time_off;	/* of time in a sample; 0: none */
	uint64_t	 first, last;	/* of the samples kept; 0: none yet */
	void		(*mmap2)(uint8_t *rec, size_t len, void *arg);
	void		*arg;
};
/* Count the whole records of buf[0..len) (a drained copy) and squeeze
 * out the samples of f->pid in place; returns the length kept. */
size_t	ring_filter_buf(uint8_t *buf, size_t len, struct ring_counts *,
	    struct ring_filter *f);
/* Copy [tail, head) to dst without the samples of pid; returns the bytes
 * copied. Records stay whole and in order. */
size_t	ring_copy_excl(const struct ring *, uint64_t tail, uint64_t head,
	    uint8_t *dst, uint32_t pid, size_t pid_off);

struct ring {
	void		*base;		/* metadata page, then data */
	size_t		 map_len;
	size_t		 size;		/* data bytes, 2^n pages */
	uint8_t		*data;
};

int	 ring_map(struct ring *, int fd, size_t pages);
void	 ring_unmap(struct ring *);
uint64_t ring_head(const struct ring *);
uint64_t ring_tail(const struct ring *);
void	 ring_release(struct ring *, uint64_t tail);
/* Hand the spans of [tail, head) to push, as perf's perf_mmap__push
 * does: one call, or two where the data wraps; the ring is not released
 * (the caller does, once the bytes are taken). */
typedef void (*ring_push_fn)(void *to, const uint8_t *buf, size_t len);
void	 ring_push(const struct ring *, const struct ring_span *, ring_push_fn,
	    void *to);

#endif
