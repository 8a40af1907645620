/*
 * record-compact implements call_graph "compact": the daemon unwinds
 * DWARF stacks (unwind/unwind.h) and writes them as plain callchain
 * samples. The kernel records each sample with its user registers and
 * stack dump, as for "dwarf"; the compact sink (record-sink.c) hands each
 * ring's chunk to one worker thread through a bounded queue, and the
 * worker rewrites every sample: the kernel's callchain,
 * PERF_CONTEXT_USER, the unwound return addresses, the registers and
 * stack dropped. The drain thread never unwinds and never waits for the
 * worker while recording: a chunk that finds the queue full is written
 * raw by the file's own writer (counted), and a rewritten chunk is
 * written by the drain thread's next pass, in queue order, through the
 * same writer.
 *
 * One file, two attrs per event (record-rotate.c): the kernel's, with
 * REGS_USER and STACK_USER, whose ids the raw samples carry; and the
 * unwound one, the same but for those two fields and exclude_callchain_
 * user, whose ids are the kernel's with RECORD_COMPACT_ID_BIT set, the
 * id a rewritten sample carries. perf report and perf script read both
 * (the raw ones they unwind themselves); a file whose every sample was
 * unwound holds none of the first.
 *
 * Ordering: the FINISHED_ROUND a pass closes goes through the queue
 * behind that pass's chunks, so a round is written after every chunk it
 * covers, raw or rewritten, as perf's ordering needs. The worker takes a
 * pass whole, once it has ended, and reads the task records of all its
 * chunks in time order before it unwinds any of its samples; every pass
 * reads every ring (record.c), so that a process's maps are read in the
 * pass that records them, whichever CPU's ring holds them.
 *
 * The worker keeps each process's maps from the records it rewrites (and
 * the preamble's, and the task records of chunks written raw, which it
 * reads and does not write), each mapping pinned to the build-id of the
 * file it mapped: the id the MMAP2 holds, else the one of
 * /proc/PID/map_files (the very file, also when deleted or replaced), else
 * the path's if it is still the same inode. A mapping none of these
 * names is left out, and its samples' stacks stop there (counted as
 * "no mapping"): never unwound with another binary.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/perf_event.h>

#include "jemit.h"
#include "log.h"
#include "proto.h"
#include "perfdata/perfdata.h"
#include "record-int.h"
#include "track.h"
#include "unwind/unwind.h"

/* The most user frames a rewritten sample carries: perf's default
 * kernel.perf_event_max_stack. */
#define RECORD_COMPACT_FRAMES	127
/* Build-ids of mapped files remembered by (device, inode). */
#define RECORD_COMPACT_BIDS	4096

enum record_compact_kind {
	RECORD_COMPACT_CHUNK,	/* ring records: rewritten, then written */
	RECORD_COMPACT_MODEL,	/* task records: read, not written */
	RECORD_COMPACT_ROUND,	/* a FINISHED_ROUND, written in its turn */
};

struct record_compact_item {
	TAILQ_ENTRY(record_compact_item) entry;
	enum record_compact_kind kind;
	struct tracefile	*tf;
	struct tracefile_mark	 mark;
	size_t			 len, cap;	/* cap: held against the bound */
	uint64_t		 unwound;	/* samples rewritten */
	uint64_t		 seq;		/* a round's: its pass */
	int			 sealed;	/* its pass has ended */
	uint8_t			*buf;
};

struct record_compact_bid {
	uint32_t	 maj, min;
	uint64_t	 ino, gen;
	uint8_t		 len;		/* 0: the file has none */
	uint8_t		 id[UNWIND_BUILD_ID_MAX];
	uint8_t		 moved;		/* the path names another file now */
};

struct record_compact_task {
	uint64_t		 time;
	size_t			 seq;	/* its place in the pass: ties */
	const uint8_t		*r;
};

struct record_compact {
	pthread_t		 th;
	int			 running;
	pthread_mutex_t		 mu;
	pthread_cond_t		 work;		/* the worker: an item, or stop */
	pthread_cond_t		 idle;		/* a drain: no pass left queued */
	struct record_compact_list in, out;	/* for the worker; done */
	size_t			 queued;	/* bytes of chunks in and at work */
	size_t			 bound;
	int			 busy;		/* the worker holds an item */
	int			 stop;
	struct record_compact_stats st;		/* under mu */
	/* rounds: the last one queued; the first that may still be
	 * written (a raw chunk went before the ones below it) */
	uint64_t		 round_seq;
	uint64_t		 round_keep;
	/* the worker's own, published into st after each item */
	struct record_compact_stats wst;
	struct unwind		*uw;
	uint64_t		 sample_type;	/* every event's, the same */
	size_t			 pid_off;
	size_t			 time_back;	/* a task record's time: this
						 * far before its end */
	uint8_t			*scratch;	/* one rewritten sample */
	struct record_compact_bid *bids;
	size_t			 nr_bids;
	/* the processes the maps know, a bit a pid (record_compact_seen) */
	uint8_t			*pids;
	uint32_t		 pid_max;
	/* the processes whose EXIT the pass read, forgotten at its round */
	uint32_t		*exits;
	size_t			 nr_exits, cap_exits;
	/* a pass's task records, to read in time order (the worker's) */
	struct record_compact_task *tasks;
	size_t			 nr_tasks, cap_tasks;
};

static const struct perf_event_header record_compact_round_hdr = {
	PERF_RECORD_FINISHED_ROUND, 0, WRITER_ROUND_LEN
};

/*
 * Two rings' worth per CPU (a pass's chunks and the next one's), and 16
 * MiB more: the worker opens each binary's CFI once, which takes tens of
 * milliseconds, and the queue must not fill meanwhile. At 99 Hz on 2
 * CPUs with 8 KiB stacks (1.7 MB/s) that is 11 s of samples; a queue
 * of two rings alone (2 MiB) left 2 to 12 % of the samples raw at 499
 * Hz while a loaded machine started new programs.
 */
size_t
record_compact_bound(const struct config *cfg, size_t ncpus)
{
	return ((size_t)16 << 20) + 2 * ncpus * (size_t)cfg->mmap_pages *
	    (size_t)sysconf(_SC_PAGESIZE);
}

/* The build-id of the file an MMAP2 record maps, 0 when found (len 0:
 * the file has none; moved: its path names another file now), -1 when
 * no file known to be the same is there. */
static int
record_compact_buildid(struct record_compact *rc, const uint8_t *r,
    size_t size, struct record_compact_bid *out)
{
	struct record_compact_bid	*b;
	struct stat			 st;
	char				 path[96];
	uint32_t			 pid, maj, min;
	uint64_t			 start, len, ino, gen;
	size_t				 i, n;
	int				 fd;

	memcpy(&pid, r + 8, 4);
	memcpy(&start, r + 16, 8);
	memcpy(&len, r + 24, 8);
	memcpy(&maj, r + 40, 4);
	memcpy(&min, r + 44, 4);
	memcpy(&ino, r + 48, 8);
	memcpy(&gen, r + 56, 8);
	for (i = 0; i < rc->nr_bids; i++) {
		b = &rc->bids[i];
		if (b->maj == maj && b->min == min && b->ino == ino &&
		    b->gen == gen) {
			*out = *b;
			return 0;
		}
	}
	memset(out, 0, sizeof(*out));
	out->maj = maj;
	out->min = min;
	out->ino = ino;
	out->gen = gen;
	/* the path, while it still names that inode */
	out->moved = stat((const char *)r + 72, &st) == -1 ||
	    st.st_ino != ino || major(st.st_dev) != maj ||
	    minor(st.st_dev) != min;
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/map_files/%" PRIx64
	    "-%" PRIx64, pid, start, start + len);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 && (out->moved ||
	    (fd = open((const char *)r + 72, O_RDONLY | O_CLOEXEC)) == -1))
		return -1;	/* gone with its process, and moved */
	n = sizeof(out->id);
	if (buildid_elf(fd, out->id, &n) == 0)
		out->len = (uint8_t)n;
	close(fd);
	if (rc->nr_bids < RECORD_COMPACT_BIDS)
		rc->bids[rc->nr_bids++] = *out;
	return 0;
}

/* The time of task record r (size bytes), its sample_id's; 0: none
 * (the preamble's, synthesized from /proc). */
static uint64_t
record_compact_time(const struct record_compact *rc, const uint8_t *r,
    size_t size)
{
	uint64_t	 t = 0;

	if (rc->time_back != 0 && size >= sizeof(struct perf_event_header) +
	    rc->time_back)
		memcpy(&t, r + size - rc->time_back, sizeof(t));
	return t;
}

/* A MMAP or MMAP2 record into the model. */
static void
record_compact_map(struct record_compact *rc, const uint8_t *r, size_t size,
    int mmap2)
{
	struct record_compact_bid	 b;
	struct unwind_map		 m;
	char				 mapped[96];
	uint16_t			 misc;
	size_t				 name = mmap2 ? 72 : 40;

	memcpy(&misc, r + 4, 2);
	if ((misc & PERF_RECORD_MISC_MMAP_DATA) || size <= name ||
	    memchr(r + name, '\0', size - name) == NULL)
		return;
	memset(&m, 0, sizeof(m));
	memcpy(&m.pid, r + 8, 4);
	memcpy(&m.start, r + 16, 8);
	memcpy(&m.len, r + 24, 8);
	memcpy(&m.pgoff, r + 32, 8);
	m.time = record_compact_time(rc, r, size);
	m.path = (const char *)r + name;
	if (mmap2 && (misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
		m.build_id = r + 44;
		m.build_id_len = r[40] <= UNWIND_BUILD_ID_MAX ? r[40] : 0;
	} else if (mmap2 && m.path[0] == '/') {
		if (record_compact_buildid(rc, r, size, &b) == -1) {
			rc->wst.unpinned++;
			return;
		}
		m.build_id = b.len ? b.id : NULL;
		m.build_id_len = b.len;
		/* replaced or deleted since: the very file the process maps,
		 * while it lives (the unwinder checks its build-id) */
		if (b.moved) {
			snprintf(mapped, sizeof(mapped), "/proc/%" PRIu32
			    "/map_files/%" PRIx64 "-%" PRIx64, m.pid, m.start,
			    m.start + m.len);
			m.path = mapped;
		}
	}
	if (unwind_map_add(rc->uw, &m) == -1)
		rc->wst.model_oom++;
}

/*
 * Whether the maps know pid, and that they do from now on. The rings
 * of the CPUs are read one after another: a child's exec and its first
 * maps, on its CPU's ring, may come before its FORK on its parent's. A
 * FORK of a process the maps know already is that late one: the maps
 * the child made itself stay (a copy of the parent's would replace
 * them, and its samples would stop at their first frame).
 */
static int
record_compact_seen(struct record_compact *rc, uint32_t pid, int set)
{
	uint8_t	 bit = (uint8_t)(1u << (pid & 7));
	int	 was;

	if (pid >= rc->pid_max)
		return 0;
	was = (rc->pids[pid >> 3] & bit) != 0;
	if (set > 0)
		rc->pids[pid >> 3] |= bit;
	else if (set < 0)
		rc->pids[pid >> 3] &= (uint8_t)~bit;
	return was;
}

/* The task records of buf[0..len) into the model (exits: see below). */
/* The process pid exited: forgotten at the round (now without memory
 * to remember it). */
static void
record_compact_exit(struct record_compact *rc, uint32_t pid)
{
	uint32_t	*tmp;
	size_t		 cap;

	if (rc->nr_exits == rc->cap_exits) {
		cap = rc->cap_exits ? rc->cap_exits * 2 : 64;
		if ((tmp = realloc(rc->exits, cap * sizeof(*tmp))) == NULL) {
			unwind_exit(rc->uw, pid);
			(void)record_compact_seen(rc, pid, -1);
			return;
		}
		rc->exits = tmp;
		rc->cap_exits = cap;
	}
	rc->exits[rc->nr_exits++] = pid;
}

/* The round of a pass: the processes that exited in it are forgotten. */
static void
record_compact_exits(struct record_compact *rc)
{
	size_t	 i;

	for (i = 0; i < rc->nr_exits; i++) {
		unwind_exit(rc->uw, rc->exits[i]);
		(void)record_compact_seen(rc, rc->exits[i], -1);
	}
	rc->nr_exits = 0;
}

/* Task record r (the size its header gives) into the model (exits: at
 * the round, record_compact_exit). */
static void
record_compact_task(struct record_compact *rc, const uint8_t *r)
{
	struct perf_event_header	 h;
	uint32_t			 pid, ppid, tid;

	memcpy(&h, r, sizeof(h));
	switch (h.type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		(void)record_compact_seen(rc, track_u32(r, 0), 1);
		record_compact_map(rc, r, h.size, h.type == PERF_RECORD_MMAP2);
		break;
	case PERF_RECORD_FORK:
		pid = track_u32(r, 0);
		ppid = track_u32(r, 4);
		if (pid == ppid || record_compact_seen(rc, pid, 1))
			break;
		if (unwind_fork(rc->uw, ppid, pid) == -1)
			rc->wst.model_oom++;
		break;
	case PERF_RECORD_COMM:
		pid = track_u32(r, 0);
		/* a thread's name is not its process's birth */
		if (pid != track_u32(r, 4))
			break;
		(void)record_compact_seen(rc, pid, 1);
		/* the new program's maps read before its exec stay (a
		 * pass's task records are in time order, but a ring the
		 * pass left for later may hold an exec older than maps
		 * already read) */
		if (h.misc & PERF_RECORD_MISC_COMM_EXEC)
			unwind_exec(rc->uw, pid, record_compact_time(rc, r,
			    h.size));
		break;
	case PERF_RECORD_EXIT:
		/* a process's last thread: forgotten at the pass's round,
		 * after its samples in this chunk and in the other CPUs'
		 * chunks of the pass (a short-lived process's samples and
		 * exit share a chunk: they stopped at "no mapping") */
		pid = track_u32(r, 0);
		tid = track_u32(r, 8);
		if (pid == tid)
			record_compact_exit(rc, pid);
		break;
	}
}

/*
 * The task records of buf[0..len): into rc->tasks with their times, or
 * with apply into the model at once, in their order (the fallback when
 * rc->tasks cannot grow). 0, or -1 (no memory: the caller applies them
 * in place).
 */
static int
record_compact_walk(struct record_compact *rc, const uint8_t *buf,
    size_t len, int apply)
{
	struct perf_event_header	 h;
	struct record_compact_task	*tmp;
	size_t				 pos, cap;

	for (pos = 0; pos + sizeof(h) <= len; pos += h.size) {
		memcpy(&h, buf + pos, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - pos)
			break;
		if (h.type != PERF_RECORD_MMAP && h.type != PERF_RECORD_MMAP2 &&
		    h.type != PERF_RECORD_FORK && h.type != PERF_RECORD_COMM &&
		    h.type != PERF_RECORD_EXIT)
			continue;
		if (apply) {
			record_compact_task(rc, buf + pos);
			continue;
		}
		if (rc->nr_tasks == rc->cap_tasks) {
			cap = rc->cap_tasks ? rc->cap_tasks * 2 : 256;
			if ((tmp = realloc(rc->tasks, cap * sizeof(*tmp))) ==
			    NULL)
				return -1;
			rc->tasks = tmp;
			rc->cap_tasks = cap;
		}
		rc->tasks[rc->nr_tasks].time = record_compact_time(rc,
		    buf + pos, h.size);
		rc->tasks[rc->nr_tasks].seq = rc->nr_tasks;
		rc->tasks[rc->nr_tasks].r = buf + pos;
		rc->nr_tasks++;
	}
	return 0;
}

static int
record_compact_task_cmp(const void *a, const void *b)
{
	const struct record_compact_task *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * One raw DWARF sample r (size bytes) rewritten into rc->scratch: the
 * fields before the callchain (the id marked unwound), the kernel's
 * callchain, PERF_CONTEXT_USER and the unwound addresses, then the
 * fields after the stack dump. Its length, never more than size (the
 * frames are bounded by the bytes dropped), or 0 when r is not one.
 */
static size_t
record_compact_sample(struct record_compact *rc, const uint8_t *r,
    size_t size)
{
	struct perf_event_header	 h;
	struct unwind_sample		 s;
	uint64_t			 ips[RECORD_COMPACT_FRAMES];
	uint64_t			 t = rc->sample_type, nr, v;
	uint64_t			 ctx = PERF_CONTEXT_USER;
	size_t				 fixed, p, q, regs_at, n = 0, max, o;
	enum unwind_stop		 why;
	uint32_t			 raw;

	fixed = 8 + 8 * (size_t)__builtin_popcountll(t &
	    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
	    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
	    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD));
	if (size < fixed + 8)
		return 0;
	memcpy(&nr, r + fixed, 8);
	if (nr > (size - fixed - 8) / 8)
		return 0;
	p = fixed + 8 + (size_t)nr * 8;		/* after the callchain */
	q = p;
	if (t & PERF_SAMPLE_RAW) {
		if (size - q < 4)
			return 0;
		memcpy(&raw, r + q, 4);
		if (raw > size - q - 4)
			return 0;
		q += 4 + raw;
	}
	regs_at = q;
	memset(&s, 0, sizeof(s));
	if (size - q < 8)
		return 0;
	memcpy(&s.abi, r + q, 8);
	q += 8;
	s.regs_mask = evsel_user_regs();
	if (s.abi != PERF_SAMPLE_REGS_ABI_NONE) {
		s.regs = r + q;
		q += 8 * (size_t)__builtin_popcountll(s.regs_mask);
	}
	if (q > size || size - q < 8)
		return 0;
	memcpy(&v, r + q, 8);
	q += 8;
	if (v != 0) {
		if (v > size - q || size - q - v < 8)
			return 0;
		s.stack = r + q;
		q += v;
		memcpy(&s.stack_size, r + q, 8);
		if (s.stack_size > v)
			return 0;
		q += 8;
	}
	if (rc->pid_off != 0) {
		memcpy(&s.pid, r + rc->pid_off, 4);
		memcpy(&s.tid, r + rc->pid_off + 4, 4);
	}
	/* a kernel thread's sample has no user part to unwind */
	if (s.abi != PERF_SAMPLE_REGS_ABI_NONE && s.stack != NULL) {
		/* never longer than the raw sample: at most one address
		 * for each 8 bytes dropped, besides PERF_CONTEXT_USER */
		max = (q - regs_at) / 8 - 1;
		if (max > RECORD_COMPACT_FRAMES)
			max = RECORD_COMPACT_FRAMES;
		why = unwind_sample(rc->uw, &s, ips, max, &n);
		rc->wst.stops[why]++;
		rc->wst.frames += n;
	} else
		rc->wst.kernel_only++;
	/* the kernel's part without a user context it may end with */
	while (nr > 0) {
		memcpy(&v, r + fixed + 8 + (size_t)(nr - 1) * 8, 8);
		if (v != PERF_CONTEXT_USER)
			break;
		nr--;
	}
	o = 0;
	memcpy(rc->scratch, r, fixed);
	o = fixed;
	v = nr + (n > 0 ? 1 + n : 0);
	memcpy(rc->scratch + o, &v, 8);
	o += 8;
	memcpy(rc->scratch + o, r + fixed + 8, (size_t)nr * 8);
	o += (size_t)nr * 8;
	if (n > 0) {
		memcpy(rc->scratch + o, &ctx, 8);
		o += 8;
		memcpy(rc->scratch + o, ips, n * 8);
		o += n * 8;
	}
	memcpy(rc->scratch + o, r + p, regs_at - p);	/* RAW */
	o += regs_at - p;
	memcpy(rc->scratch + o, r + q, size - q);	/* the rest */
	o += size - q;
	if (t & PERF_SAMPLE_IDENTIFIER) {
		memcpy(&v, rc->scratch + 8, 8);
		v |= RECORD_COMPACT_ID_BIT;
		memcpy(rc->scratch + 8, &v, 8);
	}
	memcpy(&h, r, sizeof(h));
	h.size = (uint16_t)o;
	memcpy(rc->scratch, &h, sizeof(h));
	return o;
}

/* A chunk's samples rewritten in place: every record's output is no
 * longer than it, so the output never overtakes the input. Its task
 * records are in the model already (record_compact_pass). */
static void
record_compact_chunk(struct record_compact *rc,
    struct record_compact_item *it)
{
	struct perf_event_header	 h;
	size_t				 pos, out = 0, n;

	for (pos = 0; pos + sizeof(h) <= it->len; pos += h.size) {
		memcpy(&h, it->buf + pos, sizeof(h));
		if (h.size < sizeof(h) || h.size > it->len - pos)
			break;
		if (h.type == PERF_RECORD_SAMPLE &&
		    (n = record_compact_sample(rc, it->buf + pos, h.size)) >
		    0) {
			memcpy(it->buf + out, rc->scratch, n);
			out += n;
			it->unwound++;
			continue;
		}
		if (h.type == PERF_RECORD_SAMPLE)
			rc->wst.unparsed++;
		memmove(it->buf + out, it->buf + pos, h.size);
		out += h.size;
	}
	it->len = out;
}

/* The worker's counts into those the drain and the loop read. */
static void
record_compact_publish(struct record_compact_stats *to,
    const struct record_compact_stats *w)
{
	memcpy(to->stops, w->stops, sizeof(to->stops));
	to->frames = w->frames;
	to->kernel_only = w->kernel_only;
	to->unparsed = w->unparsed;
	to->unpinned = w->unpinned;
	to->model_oom = w->model_oom;
	to->cpu_ns = w->cpu_ns;
	to->binaries = w->binaries;
	to->fallbacks = w->fallbacks;
	to->cache_bytes = w->cache_bytes;
}

/* Whether in holds a pass that has ended: the sealed items are the
 * queue's head. Under mu. */
static int
record_compact_sealed(const struct record_compact *rc)
{
	const struct record_compact_item	*it = TAILQ_FIRST(&rc->in);

	return it != NULL && it->sealed;
}

/* Whether the worker has a pass to take (or stops). Under mu. */
static int
record_compact_ready(const struct record_compact *rc)
{
	return rc->stop || record_compact_sealed(rc);
}

/*
 * The items of the passes that ended, up to the first round (passes
 * within 20 ms of a round close none), from in into batch; at the stop,
 * all. Under mu.
 */
static void
record_compact_pass_take(struct record_compact *rc,
    struct record_compact_list *batch)
{
	struct record_compact_item	*it;

	while ((it = TAILQ_FIRST(&rc->in)) != NULL &&
	    (it->sealed || rc->stop)) {
		TAILQ_REMOVE(&rc->in, it, entry);
		TAILQ_INSERT_TAIL(batch, it, entry);
		if (it->kind == RECORD_COMPACT_ROUND)
			break;
	}
}

/*
 * A pass's items: first the task records of all of them in time order,
 * as perf's ordered events read them, then each chunk's samples
 * rewritten (the round forgets the processes that exited). Why: the
 * rings are read one after another, and a program that forked, exec'd
 * and mapped its libraries on one CPU and runs on another has samples
 * on the second's ring, read first as often as not, that need the maps
 * on the first's. Left as it is: a sample of a program before its exec
 * in the same pass is unwound with the maps after it (a shell's child
 * for the few microseconds before its exec).
 */
static void
record_compact_pass(struct record_compact *rc,
    struct record_compact_list *batch)
{
	struct record_compact_item	*it;
	size_t				 i;
	int				 sorted = 0;

	rc->nr_tasks = 0;
	TAILQ_FOREACH(it, batch, entry)
		if (it->kind != RECORD_COMPACT_ROUND &&
		    record_compact_walk(rc, it->buf, it->len, 0) == -1)
			break;
	if (it == NULL) {
		qsort(rc->tasks, rc->nr_tasks, sizeof(*rc->tasks),
		    record_compact_task_cmp);
		for (i = 0; i < rc->nr_tasks; i++)
			record_compact_task(rc, rc->tasks[i].r);
		sorted = 1;
	} else
		rc->wst.model_oom++;
	TAILQ_FOREACH(it, batch, entry) {
		/* without the memory to sort, each chunk's own as before */
		if (!sorted && it->kind != RECORD_COMPACT_ROUND)
			(void)record_compact_walk(rc, it->buf, it->len, 1);
		if (it->kind == RECORD_COMPACT_CHUNK)
			record_compact_chunk(rc, it);
		else if (it->kind == RECORD_COMPACT_ROUND)
			record_compact_exits(rc);
	}
}

static void *
record_compact_main(void *arg)
{
	struct record_compact		*rc = arg;
	struct record_compact_list	 batch;
	struct record_compact_item	*it;
	struct unwind_stats		 us;
	struct timespec			 t0, t1;

	/* its own name, for top -H and bench/compact/ab.py: given here
	 * (prctl), not by its creator (a write to /proc/self/task/TID/comm,
	 * which the unit's sandbox check refuses) */
	pthread_setname_np(pthread_self(), "unwind");
	for (;;) {
		pthread_mutex_lock(&rc->mu);
		while (!record_compact_ready(rc))
			pthread_cond_wait(&rc->work, &rc->mu);
		if (TAILQ_EMPTY(&rc->in)) {
			pthread_mutex_unlock(&rc->mu);
			break;
		}
		TAILQ_INIT(&batch);
		record_compact_pass_take(rc, &batch);
		rc->busy = 1;
		pthread_mutex_unlock(&rc->mu);

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		record_compact_pass(rc, &batch);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
		unwind_stats(rc->uw, &us);

		rc->wst.cpu_ns += (uint64_t)(t1.tv_sec - t0.tv_sec) *
		    1000000000 + (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
		rc->wst.binaries = us.binaries;
		rc->wst.fallbacks = us.fallbacks;
		rc->wst.cache_bytes = us.cache_bytes;

		pthread_mutex_lock(&rc->mu);
		rc->busy = 0;
		record_compact_publish(&rc->st, &rc->wst);
		while ((it = TAILQ_FIRST(&batch)) != NULL) {
			TAILQ_REMOVE(&batch, it, entry);
			if (it->kind == RECORD_COMPACT_MODEL) {
				free(it->buf);
				free(it);
			} else
				TAILQ_INSERT_TAIL(&rc->out, it, entry);
		}
		if (!record_compact_sealed(rc))
			pthread_cond_broadcast(&rc->idle);
		pthread_mutex_unlock(&rc->mu);
	}
	return NULL;
}

/* kernel.pid_max: the largest pid is one less (4M on 64-bit: 512 KiB
 * of bits). */
static uint32_t
record_compact_pid_max(void)
{
	FILE		*f;
	unsigned long	 v = 0;

	if ((f = fopen("/proc/sys/kernel/pid_max", "re")) != NULL) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v > 0 && v <= (1ul << 22) ? (uint32_t)v : 1u << 22;
}

struct record_compact *
record_compact_create(const struct record *rec)
{
	/* .eh_frame alone: a debug file's DWARF, decompressed whole for
	 * its .debug_frame, cost the worker milliseconds per binary and
	 * process (74 % of its time on a compile load) */
	struct unwind_config	 uc = { .cache_bytes = RECORD_COMPACT_CACHE,
	    .eh_frame_only = 1 };
	struct record_compact	*rc;
	size_t			 i;

	if ((rc = calloc(1, sizeof(*rc))) == NULL)
		return NULL;
	TAILQ_INIT(&rc->in);
	TAILQ_INIT(&rc->out);
	rc->bound = record_compact_bound(&rec->cfg, rec->nr_cpus);
	rc->sample_type = rec->evs[0].attr.sample_type;
	rc->pid_off = perfdata_pid_off(rc->sample_type);
	rc->time_back = perfdata_id_time_back(rc->sample_type);
	/* one layout for all: a tracepoint's RAW would need the id's event
	 * (config.c refuses tracepoints with compact) */
	for (i = 1; i < rec->nr_evs; i++)
		if (rec->evs[i].attr.sample_type != rc->sample_type)
			goto error;
	rc->pid_max = record_compact_pid_max();
	if ((rc->pids = calloc(rc->pid_max / 8 + 1, 1)) == NULL ||
	    (rc->scratch = malloc(TRACK_RECORD_MAX)) == NULL ||
	    (rc->bids = calloc(RECORD_COMPACT_BIDS, sizeof(*rc->bids))) ==
	    NULL || (rc->uw = unwind_create(&uc)) == NULL)
		goto error;
	pthread_mutex_init(&rc->mu, NULL);
	pthread_cond_init(&rc->work, NULL);
	pthread_cond_init(&rc->idle, NULL);
	if ((errno = pthread_create(&rc->th, NULL, record_compact_main, rc)) !=
	    0) {
		pthread_mutex_destroy(&rc->mu);
		pthread_cond_destroy(&rc->work);
		pthread_cond_destroy(&rc->idle);
		goto error;
	}
	rc->running = 1;
	return rc;
error:
	unwind_destroy(rc->uw);
	free(rc->pids);
	free(rc->exits);
	free(rc->bids);
	free(rc->scratch);
	free(rc);
	return NULL;
}

static void
record_compact_free_list(struct record_compact_list *l)
{
	struct record_compact_item	*it;

	while ((it = TAILQ_FIRST(l)) != NULL) {
		TAILQ_REMOVE(l, it, entry);
		free(it->buf);
		free(it);
	}
}

void
record_compact_destroy(struct record_compact *rc)
{
	if (rc == NULL)
		return;
	if (rc->running) {
		pthread_mutex_lock(&rc->mu);
		rc->stop = 1;
		pthread_cond_signal(&rc->work);
		pthread_mutex_unlock(&rc->mu);
		pthread_join(rc->th, NULL);
		pthread_mutex_destroy(&rc->mu);
		pthread_cond_destroy(&rc->work);
		pthread_cond_destroy(&rc->idle);
	}
	record_compact_free_list(&rc->in);
	record_compact_free_list(&rc->out);
	unwind_destroy(rc->uw);
	free(rc->pids);
	free(rc->exits);	/* a stop between an EXIT and its round */
	free(rc->tasks);
	free(rc->bids);
	free(rc->scratch);
	free(rc);
}

/*
 * An item onto the worker's queue. The worker is woken once a pass, by
 * the collect that ends it (record_compact_collect), for all the pass
 * queued: woken at each item, it woke up to twice a pass, with a chunk
 * and then with the round (always-on: 2.3-4.5 wakeups a second,
 * bench/history/2026-12-06-quiet). A worker at work takes each item in
 * its turn anyway.
 */
static void
record_compact_queue(struct record_compact *rc,
    struct record_compact_item *it)
{
	pthread_mutex_lock(&rc->mu);
	TAILQ_INSERT_TAIL(&rc->in, it, entry);
	if (it->kind == RECORD_COMPACT_CHUNK && rc->queued > rc->st.peak)
		rc->st.peak = rc->queued;
	pthread_mutex_unlock(&rc->mu);
}

static struct record_compact_item *
record_compact_item(enum record_compact_kind kind, struct tracefile *tf,
    size_t cap)
{
	struct record_compact_item	*it;

	if ((it = calloc(1, sizeof(*it))) == NULL)
		return NULL;
	if (cap > 0 && (it->buf = malloc(cap)) == NULL) {
		free(it);
		return NULL;
	}
	it->kind = kind;
	it->tf = tf;
	it->cap = cap;
	return it;
}

int
record_compact_room(struct record_compact *rc, struct record_take *t)
{
	size_t	 n = (size_t)(t->head - t->tail);

	pthread_mutex_lock(&rc->mu);
	if (rc->queued + n > rc->bound) {
		pthread_mutex_unlock(&rc->mu);
		return -1;
	}
	rc->queued += n;
	pthread_mutex_unlock(&rc->mu);
	if ((t->item = record_compact_item(RECORD_COMPACT_CHUNK, NULL, n)) ==
	    NULL) {
		pthread_mutex_lock(&rc->mu);
		rc->queued -= n;
		pthread_mutex_unlock(&rc->mu);
		return -1;
	}
	t->copy = t->item->buf;
	return 0;
}

void
record_compact_take(struct record_compact *rc, struct record *rec,
    struct record_cpu *c, struct tracefile *tf, struct record_take *t)
{
	struct record_compact_item	*it = t->item;

	it->tf = tf;
	it->len = record_chunk(rec, c, tf, t, it->buf, it->cap, &it->mark);
	if (it->len == 0) {
		pthread_mutex_lock(&rc->mu);
		rc->queued -= it->cap;
		pthread_mutex_unlock(&rc->mu);
		free(it->buf);
		free(it);
		return;
	}
	record_compact_queue(rc, it);
}

void
record_compact_raw(struct record_compact *rc, const uint8_t *data,
    size_t size, uint64_t from, uint64_t to)
{
	struct record_compact_item	*it;
	struct sbuf			 sb;
	size_t				 len;

	/*
	 * A round the worker still holds would be written after this chunk,
	 * which is newer than the samples the round lets perf sort and
	 * flush: those rounds go, the pass's own round closes them all.
	 */
	pthread_mutex_lock(&rc->mu);
	rc->st.raw_chunks++;
	rc->round_keep = rc->round_seq + 1;
	pthread_mutex_unlock(&rc->mu);
	/* its task records still change the maps the worker keeps */
	sbuf_init(&sb);
	if (track_copy_types(&sb, data, size, from, to,
	    1u << PERF_RECORD_MMAP | 1u << PERF_RECORD_MMAP2 |
	    1u << PERF_RECORD_COMM | 1u << PERF_RECORD_FORK |
	    1u << PERF_RECORD_EXIT) == -1 || sb.len == 0 ||
	    (it = record_compact_item(RECORD_COMPACT_MODEL, NULL, 0)) == NULL) {
		sbuf_finish(&sb);
		return;
	}
	it->buf = sbuf_take(&sb, &len);
	it->len = len;
	record_compact_queue(rc, it);
}

void
record_compact_raw_count(struct record_compact *rc, struct tracefile *tf,
    uint64_t samples)
{
	pthread_mutex_lock(&rc->mu);
	rc->st.raw_samples += samples;
	pthread_mutex_unlock(&rc->mu);
	tracefile_count_compact(tf, 0, samples);
}

void
record_compact_preamble(struct record_compact *rc, const uint8_t *buf,
    size_t len)
{
	struct record_compact_item	*it;
	uint64_t			 off = 0;

	/* a file's head: its records begin at data.offset */
	if (len >= 48 && memcmp(buf, "PERFILE2", 8) == 0) {
		memcpy(&off, buf + 40, 8);
		if (off > len)
			return;
	}
	if ((it = record_compact_item(RECORD_COMPACT_MODEL, NULL,
	    len - (size_t)off)) == NULL)
		return;
	memcpy(it->buf, buf + off, len - (size_t)off);
	it->len = len - (size_t)off;
	record_compact_queue(rc, it);
}

int
record_compact_round(struct record_compact *rc, struct tracefile *tf)
{
	struct record_compact_item	*it;

	if ((it = record_compact_item(RECORD_COMPACT_ROUND, tf, 0)) == NULL)
		return -1;
	pthread_mutex_lock(&rc->mu);
	it->seq = ++rc->round_seq;
	pthread_mutex_unlock(&rc->mu);
	record_compact_queue(rc, it);
	return 0;
}

size_t
record_compact_collect(struct record_compact *rc, struct record *rec,
    int last, record_compact_write_fn write)
{
	struct record_compact_list	 done;
	struct record_compact_item	*it;
	uint8_t				*b;
	uint64_t			 keep;
	size_t				 n = 0;

	TAILQ_INIT(&done);
	pthread_mutex_lock(&rc->mu);
	/* the pass's chunks and round (and what the loop queued since the
	 * last pass) for the worker: one wakeup for them all, and the
	 * worker takes no part of a pass before it has ended (a ring read
	 * later in the pass may hold the maps its samples need) */
	TAILQ_FOREACH_REVERSE(it, &rc->in, record_compact_list, entry) {
		if (it->sealed)
			break;
		it->sealed = 1;
	}
	if (!TAILQ_EMPTY(&rc->in))
		pthread_cond_signal(&rc->work);
	/* a file's last drain waits for what the worker holds of it: the
	 * queue's bound bounds the wait (not for what another thread
	 * queued since the seal: that is the next pass's) */
	while (last && (rc->busy || record_compact_sealed(rc)))
		pthread_cond_wait(&rc->idle, &rc->mu);
	TAILQ_CONCAT(&done, &rc->out, entry);
	keep = rc->round_keep;
	pthread_mutex_unlock(&rc->mu);
	while ((it = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, it, entry);
		if (it->kind == RECORD_COMPACT_ROUND) {
			if (it->seq >= keep &&
			    (b = malloc(WRITER_ROUND_LEN)) != NULL) {
				memcpy(b, &record_compact_round_hdr,
				    WRITER_ROUND_LEN);
				(void)write(rec, it->tf, b, WRITER_ROUND_LEN,
				    NULL);
			}
		} else {
			pthread_mutex_lock(&rc->mu);
			rc->queued -= it->cap;
			rc->st.unwound += it->unwound;
			pthread_mutex_unlock(&rc->mu);
			tracefile_count_compact(it->tf, it->unwound, 0);
			n += it->len;
			if (write(rec, it->tf, it->buf, it->len,
			    &it->mark) == -1)
				log_warn("%s: writing unwound samples",
				    tracefile_partial(it->tf));
			it->buf = NULL;
		}
		free(it->buf);
		free(it);
	}
	return n;
}

void
record_compact_stats(struct record_compact *rc,
    struct record_compact_stats *st)
{
	pthread_mutex_lock(&rc->mu);
	*st = rc->st;
	st->queued = rc->queued;
	st->bound = rc->bound;
	pthread_mutex_unlock(&rc->mu);
}

void
record_compact_metrics(struct record_compact *rc, struct metrics *m)
{
	struct record_compact_stats	 st;

	record_compact_stats(rc, &st);
	m->compact_unwound_samples += st.unwound;
	m->compact_raw_samples += st.raw_samples;
}

/* Why each unwinding stopped, by the stop's name: "end" is a whole
 * stack. */
static void
record_compact_add_stops(json_object *o, const char *key, const void *base)
{
	const struct record_compact_stats	*st = base;
	json_object				*w;
	size_t					 i;

	w = json_object_new_object();
	for (i = 0; i < UNWIND_STOP_COUNT; i++)
		proto_add_u64(w, unwind_stop_name((enum unwind_stop)i),
		    st->stops[i]);
	json_object_object_add(o, key, w);
}

static const struct jemit_field record_compact_rows[] = {
	JEMIT_U("unwound_samples", struct record_compact_stats, unwound),
	JEMIT_U("raw_samples", struct record_compact_stats, raw_samples),
	JEMIT_U("raw_chunks", struct record_compact_stats, raw_chunks),
	JEMIT_U("frames", struct record_compact_stats, frames),
	JEMIT_U("kernel_only_samples", struct record_compact_stats,
	    kernel_only),
	JEMIT_U("unparsed_samples", struct record_compact_stats, unparsed),
	JEMIT_U("mappings_unpinned", struct record_compact_stats, unpinned),
	JEMIT_U("mappings_not_kept", struct record_compact_stats, model_oom),
	JEMIT_FN_ROW("stops", record_compact_add_stops),
	JEMIT_U("worker_cpu_ns", struct record_compact_stats, cpu_ns),
	JEMIT_U("binaries", struct record_compact_stats, binaries),
	JEMIT_U("libdwfl_fallbacks", struct record_compact_stats, fallbacks),
	JEMIT_U("cache_bytes", struct record_compact_stats, cache_bytes),
	JEMIT_U("queued_bytes", struct record_compact_stats, queued),
	JEMIT_U("queue_peak_bytes", struct record_compact_stats, peak),
	JEMIT_U("queue_bound_bytes", struct record_compact_stats, bound),
	JEMIT_ROWS_END
};

json_object *
record_compact_status(struct record_compact *rc)
{
	struct record_compact_stats	 st;

	record_compact_stats(rc, &st);
	return jemit_object(record_compact_rows, &st);
}
