/*
 * record-int.h declares what the record-*.c files share, and no one
 * else. The session itself (record.c) opens and closes the rings;
 * record-drain.c moves their data into the current file; record-rotate.c
 * builds the next file's preamble and switches to it; record-file.c
 * finishes the closed files and pauses and resumes on a full disk or a
 * removed directory; record-status.c reports. record.h is the public
 * API.
 *
 * Threads: struct record says which of its parts are the drain's,
 * shared with the loop under the recording's recursive lock (rec->lock,
 * record-thread.c), and which are the loop's alone (the closing files,
 * the timers, the session's bookkeeping), which the loop touches without
 * the lock. "The loop" below means the event loop's thread with the lock
 * held (record.h's functions take it) unless a function says otherwise;
 * "the drain" means the drain thread's passes (a rotation's switch among
 * them, which one makes for the loop while the loop waits without the
 * lock), or the loop's own drains (a stop's or a CPU's last one, the
 * tick's and a switch when no thread runs), with the lock held either
 * way. Each group says which of them calls its functions.
 * What the drain changes and status reports, the lock's holder publishes
 * as it lets go, and the loop reads that without the lock
 * (record-publish.c).
 */
#ifndef PERFSPILL_RECORD_INT_H
#define PERFSPILL_RECORD_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <sys/uio.h>
#include <linux/perf_event.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "buildid.h"
#include "compress.h"
#include "config.h"
#include "cpuring.h"
#include "evsel.h"
#include "flight.h"
#include "record.h"
#include "record-metrics.h"
#include "ring.h"
#include "perfdata/sbuf.h"
#include "write.h"
#include "unwind/unwind.h"

/* The configured events and the task-tracking event before them. */
#define RECORD_MAX_EVSELS	(CONFIG_MAX_EVENTS + 1)

/*
 * record-publish.c: the drain's counters as the lock's holder last
 * published them, for the loop to read without the lock (status, the
 * metrics, the summary line). The holder publishes (record_publish): the
 * drain thread at the end of each pass, the loop as it lets go of the
 * lock (record_unlock) and as a stop ends; record_published reads them
 * on any thread, never waiting for the lock.
 */
struct record_cpu_counters {		/* one CPU's ring and cblocks */
	uint64_t		 bytes;
	struct ring_counts	 counts;
	uint64_t		 cblocks;	/* lane.nr */
	struct cblock_stats	 stats;		/* lane.stats */
};

struct record_pool_counters {		/* struct record_pool's, status' */
	uint64_t		 nr, cap, write, finished, busy;
	uint64_t		 want, max, peak, grown, shrunk;
	uint64_t		 spills, spill_bytes;
	uint64_t		 pads;
	struct cblock_stats	 stats;
};

struct record_counters {
	uint64_t		 passes, busy;	/* record_thread's */
	uint64_t		 buffers;	/* record_buffer_bytes */
	uint64_t		 pool_made;
	struct record_pool_counters pool;
	struct cblock_stats	 heap;		/* the writer's heap_stats */
	uint64_t		 copies;	/* writer_copies */
	/* a flight window's (rec->flight->fl) */
	struct flight_stats	 window;
	uint64_t		 window_store;	/* fl.store.len */
	/* the current file: file 0 when there is none */
	uint64_t		 file, direct, direct_refused;
	uint64_t		 file_bytes, file_samples;
	char			 file_name[NAME_MAX + 1];
};

/* In words, each an atomic: the structs are whole words (checked in
 * record-publish.c). */
#define RECORD_WORDS(T)		(sizeof(T) / sizeof(uint64_t))

struct record_published {
	atomic_uint		 seq;		/* odd: being published */
	_Atomic uint64_t	 words[RECORD_WORDS(struct record_counters)];
};

struct record;
/* The holder of the lock (the drain thread, or the loop): publish. */
void	record_publish(struct record *);
/* Any thread, without the lock: the last published counters, and those
 * of the first ncpus CPUs (the loop's rec->nr_cpus at most) into cpus. */
void	record_published(const struct record *, struct record_counters *,
	    struct record_cpu_counters *cpus, size_t ncpus);



struct record_cpu {
	struct record		*rec;
	int			 cpu;
	int			*fds;		/* one per slot; fds[0] owns the ring */
	uint64_t		*ids;		/* their kernel ids */
	int			 offline;	/* closed: the CPU went offline */
	int			 open_failed;	/* ...or could not be opened */
	struct ring		 ring;
	int			 watched;	/* by the drain thread */
	struct writer_lane	 lane;		/* its cblocks (a buffered file) */
	struct ring_counts	 counts;
	uint64_t		 bytes;		/* drained from the ring */
	int			 full;		/* ...last time: it may have lost */
	uint64_t		 pass_head;	/* its head when a pass began */
	/* its record_cpu_counters, published (record-publish.c) */
	_Atomic uint64_t	 published[RECORD_WORDS(
				    struct record_cpu_counters)];
};


/* What took a snapshot ("command", "SIGUSR2", "psi:cpu"). */
#define RECORD_WHY_LEN		64

#define RECORD_UNFINISHED_MAX	8
/*
 * A drain that found every cblock of a ring in flight looks again after
 * 1 ms, then 2, 4, 8 while they stay busy: a write to a slow disk takes
 * milliseconds, and a timer at 1 ms throughout doubled the daemon's CPU
 * on a 50 MB/s disk. At 8 ms another queued cblock keeps the disk busy
 * meanwhile (a ring's worth takes longer than that to write there).
 */
#define RECORD_RETRY_MIN_US	1000
#define RECORD_RETRY_MAX_US	8000

/*
 * A closing file's completions (its last writes, its fsync on glibc's
 * AIO thread) are polled after 5 ms, then 10, 20, 40 while nothing
 * lands: a stop's fsync takes 50-100 ms here, and a poll every 5 ms
 * throughout was 10-20 of the daemon's wakeups a stop.
 */
#define RECORD_REAP_MIN_US	5000
#define RECORD_REAP_MAX_US	40000

/*
 * What a pass saw, for the session to act on (record.c decides:
 * the job files report and never pause, rotate or finish themselves).
 */
struct record_pass {
	int			 err;	/* the current file's writes failed */
	int			 full;	/* ...it reached rotate_size */
	size_t			 busy;	/* rings left: every cblock in flight */
};

struct record;
typedef void (*record_passed_fn)(struct record *, const struct record_pass *);

/*
 * The flushes clients asked for (record-flush.c): each waits for the
 * drain thread's pass with its ticket, then for that pass's writes to
 * land. The thread fills in the pass's figures under the lock.
 */
#define RECORD_FLUSH_WAITERS	32
struct record_flush {
	struct {
		record_flushed_cb	 cb;
		void			*arg;
		uint64_t		 ticket;
	}			 w[RECORD_FLUSH_WAITERS];
	size_t			 nr;
	uint64_t		 asked;		/* the last ticket given */
	uint64_t		 passed;	/* the last ticket passed */
	char			 file[NAME_MAX + 1]; /* ...into this file
						 * (its .partial name; "": none) */
	uint64_t		 target;	/* ...which then ended here */
	uint64_t		 tail;		/* ...its last bytes padded */
};

/* The drain thread (record-thread.c). */
/* One drain thread: pinned to a CPU, it watches that CPU's rings. */
struct record_drainer {
	struct record		*rec;
	pthread_t		 th;
	int			 started;
	int			 cpu;		/* its CPU */
	int			 pinned;	/* ...it runs there alone */
	int			 epfd;		/* its rings and wakefd */
	int			 wakefd;	/* eventfd: stop, pad, flush */
	int			 retry_ms;	/* rings left: again after */
	/* the first drainer's periodic pass over every ring, timed by its
	 * own wait (CLOCK_MONOTONIC ns; 0: none), and the passes since the
	 * last that padded the direct tail */
	uint64_t		 due_ns;
	unsigned int		 ticks;
};

struct record_thread {
	struct record_drainer	*dr;		/* one per CPU the daemon may use */
	size_t			 nr_dr;
	int			 running;
	int			 loopfd;	/* eventfd: pending is set */
	struct event		*loop_ev;
	atomic_int		 stop;
	/* the next pass reads every ring and pads the direct tail */
	atomic_int		 pad;
	atomic_ulong		 flush;		/* ...for this flush ticket */
	uint64_t		 period_ns;	/* drain_ms: the timed pass */
	/* the timed pass pads the direct tail too when drain_ms <=
	 * direct_tail_ms: every pad_ticks-th one (0: the loop's padder,
	 * a timer of its own) */
	unsigned int		 pad_ticks;
	struct record_pass	 pending;	/* for the loop (passed) */
	record_passed_fn	 passed;
	uint64_t		 prio;		/* SCHED_FIFO, or 0 */
	int			 refused;	/* errno: the default's FIFO */
	int			 unpinned;	/* errno: a drainer runs anywhere */
	uint64_t		 wakeups;	/* passes run */
	uint64_t		 passes;	/* ...while recording */
	uint64_t		 busy;		/* ...that left a ring */
	atomic_ulong		 contended;	/* the lock was held */
	atomic_ulong		 waited_ns;	/* ...this long in all */
	atomic_int		 realtime_wait;	/* ...timed on CLOCK_REALTIME */
	/* a rotation's switch the loop asked for (record_thread_switch):
	 * the next pass of any drainer takes it */
	struct record_switch * _Atomic switch_asked;
	int			 switchfd;	/* eventfd: answered, or gone */
	atomic_int		 gone;		/* drainers that left unasked */
};

struct record_sink;

/*
 * The files a recording no longer writes, and what became of them: the
 * loop's alone. The drain thread never reads any of it, so the loop
 * finishes files (their header and features, fsync, rename, manifest,
 * hand-off, retention) without the drain's lock (record-file.c). A file
 * is on closing while requests against it may be in flight (the drain
 * thread's reaping updates it), then on finishing once every one has
 * landed.
 */
struct record_files {
	struct tracefile_list	 closing;
	struct tracefile_list	 finishing;
	uint64_t		 done;
	uint64_t		 bytes_cut;	/* written, then cut off a failed file */
	uint64_t		 lost;		/* finished where no one sees them */
	char			 last[NAME_MAX + 1];
	/* .partial files a full disk left without header and features:
	 * finished when space returns, or by salvage at the next start */
	char			 unfinished[RECORD_UNFINISHED_MAX][NAME_MAX + 1];
	size_t			 nr_unfinished;
	char			 problem[CONFIG_PATH_LEN + 128]; /* for stop, or "" */
	int			 dir_gone;	/* paused: the directory was removed */
	time_t			 retry_at;	/* ...look for it again then */
	unsigned int		 retry_wait;	/* ...seconds, doubling */
	/* finished/'s, given by the creator: what closed files go to */
	const struct record_finish_ops	*finish;
	void			*finish_ctx;
};

/*
 * A recording, by owner. Three threads touch it: the loop (the control
 * socket, timers, rotation, the closing files), the drain thread
 * (record-thread.c) and, with compact, the unwinding worker, which
 * takes no lock of it (record-compact.c).
 */
struct record {
	/* The lock: what the drain thread and the loop share (the second
	 * group) is touched under it; see record-thread.c for its rules. */
	pthread_mutex_t		 lock;
	unsigned int		 held;		/* by the loop: how often */
	/* The drain thread's own, and the counters it publishes. */
	struct record_thread	 thread;
	/* The drain's counters for the loop, published by the lock's
	 * holder; read without the lock (record-publish.c). */
	struct record_published	 published;

	/* Set by the loop at a start or a live change, the lock held; read
	 * by both while recording. */
	enum record_state	 state;
	struct config		 cfg;
	struct evsel		 evs[RECORD_MAX_EVSELS];
	size_t			 nr_evs;
	struct cpuring_spec	 spec;		/* what each CPU opens */
	size_t			 nr_fds;	/* ...fds per CPU */
	uint32_t		 self_pid;	/* our samples are not written... */
	size_t			 pid_off;	/* ...found here; 0: keep them */
	size_t			 time_off;	/* of a sample's time; 0: none */
	uint64_t		 min_chunk;	/* bytes a wakeup drains at least */
	uint64_t		 round_max;	/* ...before a wakeup takes all */
	struct buildid		*bids;		/* the daemon's life, not a start's;
						 * used under the lock */

	/* The drain's, under the lock: the rings, the file they go to and
	 * its writer. The loop takes the lock to change them (a pause, CPU
	 * hotplug, a stop's last drain), or asks a drain thread's pass to
	 * (a rotation's switch, record_thread_switch). */
	struct record_cpu	*cpus;		/* never moves: AIO points in */
	size_t			 nr_cpus;	/* ever opened this recording */
	size_t			 cap_cpus;	/* the possible CPUs */
	struct tracefile	*cur;		/* record_set_file */
	struct writer		 w;		/* cur's (write/write.h) */
	/* the sink the drain hands each ring's bytes to (record-sink.c):
	 * record_sink_choose's, when cur or what decides it changes */
	const struct record_sink *sink;
	uint8_t			*xbuf;		/* a drain without our samples */
	struct compress		*zc;		/* NULL: files are not compressed */
	uint8_t			*zbuf;		/* a serial or spilled chunk,
						 * compressed */
	size_t			 zcap;
	/* drained since the last pass that read every ring (a wakeup takes
	 * all past round_max); that pass's round may be put off, and the
	 * files' rounds are counted apart (record-sink.c) */
	uint64_t		 round_bytes;
	uint64_t		 pass_ns;	/* when this pass read the heads */
	uint64_t		 round_ns;	/* ...the last round's pass did,
						 * in whichever file */
	uint64_t		 unrounded;	/* drained since that round */
	struct sbuf		 kept;		/* a rotation's walk's task records */
	int			 keeping;	/* ...drained since it began */
	struct record_flush	 flush;		/* flushes asked for */
	/* a flight recording (mode flight): its window, NULL otherwise */
	struct record_flight	*flight;
	/* call_graph compact: the unwinding worker, NULL otherwise */
	struct record_compact	*compact;

	/* The loop's alone: the drain thread touches none of it. */
	struct event_base	*base;
	int			 dirfd;
	char			 host[64];
	char			 name[RECORD_NAME_MAX + 1]; /* "": default */
	char			 stem[64 + RECORD_NAME_MAX + 2]; /* of file
						 * names: host[-name] */
	unsigned int		 seq;
	struct record_files	 files;		/* what no longer takes data */
	int			 cgfds[CONFIG_MAX_CGROUPS]; /* -G filter */
	int			*tids;		/* -p, -t, -u targets (target.h) */
	char			 cgroupfs[CONFIG_PATH_LEN]; /* cgroup2 mount */
	uint64_t		 cpus_added;	/* CPU hotplug, this recording */
	uint64_t		 cpus_removed;
	struct record_prep	*prep;		/* a rotation being prepared */
	uint64_t		 ktext, ketext;	/* kernel text, read once a start */
	struct event		*reaper;	/* polls completions while closing */
	long			 reap_us;	/* ...every this long, doubling */
	struct event		*retry;		/* a drain again soon: cblocks were
						 * all in flight */
	long			 retry_us;	/* ...after this long, doubling */
	struct event		*tick;
	uint64_t		 tick_at;	/* ...due then (CLOCK_MONOTONIC
						 * ns), 0: not armed */
	struct event		*padder;	/* the direct stream's tail */
	/* the loop's drains where no drain thread runs, at the tick:
	 * every thread.pad_ticks-th pads, as the thread's timed passes do */
	unsigned int		 ticks;		/* since the last pad */
	time_t			 started;
	char			 paused[128];	/* why recording is paused, or "" */
	int			 lockfd;	/* the output directory's lock */
	int			 direct_refused; /* errno: files go buffered */
	json_object		*last_totals;	/* of the previous recording */
	struct metrics		 life;	/* recordings before this one */
	record_stop_cb		 stop_cb;
	void			*stop_arg;
	/* a flight recording's triggers, and when one last snapshot */
	struct trigger_set	*triggers;
	struct timespec		 snap_at;	/* CLOCK_MONOTONIC; 0: never */
	enum record_window_end	 window_end;	/* the last stop's window */
	char			 window_why[256]; /* ...why it failed */
	uint64_t		 snap_suppressed;/* triggers within the interval */
};


/* record-cpu.c: one CPU's events, ring and cblocks, side by side. The
 * loop calls these. */
int	record_cpus_alloc(struct record *, const int *cpus, size_t n);
struct record_cpu *record_cpu_slot(struct record *, int cpu);
int	record_cpu_open(struct record *, struct record_cpu *,
	    struct config_error *);
int	record_cpu_buffers(struct record *, struct record_cpu *, size_t n);
/* What tf's writes need in the AIO mode with n cblocks: the pool for a
 * direct file, a ring's cblocks on every open CPU for a buffered one.
 * 0 or -1 (out of memory). */
int	record_cpus_buffers(struct record *, struct tracefile *, uint64_t n);
/* (what a recording with cfg will hold: record_memory, record.h) */
void	record_cpu_close(struct record *, struct record_cpu *);
void	record_cpu_free_buffers(struct record_cpu *);
void	record_cpus_close(struct record *);
void	record_cpus_free(struct record *);

/* record-thread.c: the drain's thread and the recording's lock. The loop
 * takes the lock with record_lock (the drain thread only tries it), and
 * calls the other functions. */
int	record_lock_init(struct record *);
void	record_lock(struct record *);
void	record_unlock(struct record *);
/* The lock's holder sleeps ts: the loop without the lock if it holds
 * it once, a drain thread making a switch for the loop without it. */
void	record_sleep(struct record *, const struct timespec *);
void	record_thread_init(struct record *);
/* Run the drain on its thread (SCHED_FIFO cfg.realtime, or the normal
 * scheduler); passed runs in the loop, without the lock (it takes it
 * where it needs it), with a pass that failed a write or filled the
 * file. The first thread reads every ring every cfg.drain_ms by itself,
 * and pads the direct tail every pad_ticks-th time (thread.pad_ticks;
 * 0: the loop's padder asks). 0, or -1 with errno (EPERM: no
 * CAP_SYS_NICE). */
int	record_thread_start(struct record *, record_passed_fn passed);
/* Have the thread's next pass read every ring and pad the direct
 * stream's tail to disk after it (the padder's): 0, or -1 when no
 * thread runs (the caller drains). */
int	record_thread_pad(struct record *);
/* Does a periodic pass pad the direct tail (the first drainer's timed
 * pass, or the loop's tick where no thread runs, counted in *ticks):
 * every thread.pad_ticks-th, where the current file is direct. */
int	record_thread_pad_due(struct record *, unsigned int *ticks);
/* The same as record_thread_pad, for flush ticket t (record-flush.c):
 * 0, or -1 when no thread runs. */
int	record_thread_flush(struct record *, uint64_t t);
/* The loop, without the lock: have a drain thread's next pass make the
 * switch sw (record_take_over), and wait for it. 0 once it is made, or
 * -1 when no drain thread runs or they left (the loop makes it). */
int	record_thread_switch(struct record *, struct record_switch *sw);
/* Join it (the lock may be held). */
void	record_thread_stop(struct record *);
void	record_thread_free(struct record *);
/* A ring the thread drains from now, or no longer (before it closes). */
int	record_thread_watch(struct record *, struct record_cpu *);
void	record_thread_unwatch(struct record *, struct record_cpu *);

/* record-drain.c: rings to chunks, in the drain (the drain thread, or
 * the loop) */
/* One pass over every ring holding at least min bytes into the current
 * file. last: a file's last drain (rotation, stop, CPU offline): every
 * ring is read, waiting for a cblock where all are in flight. */
void	record_drain(struct record *, uint64_t min, int last,
	    struct record_pass *);

/* What one pass found in a ring, and what its sink made of it so far. */
struct record_take {
	uint64_t		 head, tail;
	struct ring_span	 sp;
	int64_t			 n;		/* bytes */
	struct ring_counts	 before;	/* the ring's counts until now */
	size_t			 repair;	/* build-id flags to repair */
	struct writer_room	 room;		/* the writer's for it */
	/* what push took: bytes copied to copy, or the pieces where they
	 * lie in the ring (a sink that writes from the ring) */
	uint8_t			*copy;
	size_t			 len;
	struct iovec		 iov[2];
	int			 niov;
	struct record_compact_item *item;	/* compact: the worker's */
};

/* What one pass did, ring by ring, for its end. */
struct record_sweep {
	size_t		 npushed;	/* rings put into the file */
	size_t		 nflight;	/* rings taken by a flight window */
	size_t		 left;		/* non-empty rings not read */
	uint64_t	 drained;	/* bytes put into the file */
};

/* The chunk functions below and the sinks run in the drain (a sink's
 * extra and pad also in the loop, for a preamble and the padder). */
/* The ring's data, which push copied to t->copy, as records for the
 * file (our own samples left out, build-id flags repaired, compressed
 * with -z) at dst, room for avail bytes; the ring is released first. The
 * bytes put at dst (0: only our own samples), mark what they hold. */
size_t	record_chunk(struct record *, struct record_cpu *,
	    struct tracefile *, const struct record_take *, uint8_t *dst,
	    size_t avail, struct tracefile_mark *);
/* The serial sink's chunk: the pieces push left in the ring written
 * by the writer from where they lie (or a copy without our own
 * samples), compressed into zbuf with -z; then the ring is released.
 * The bytes it put into tf. */
size_t	record_chunk_serial(struct record *, struct record_cpu *,
	    struct tracefile *, const struct record_take *);

/*
 * record-sink.c: where a drain's rings go, in the shape of perf's
 * perf_mmap__push(map, to, push) and record__pushfn. The drain (on the
 * drain thread) asks room before it reads a ring (-1: leave the ring,
 * no buffer free), hands the ring's bytes to push, one call per piece
 * (two where the ring wraps), and ends the ring with done, which makes
 * the chunk, hands it on and releases the ring. reads_ring: the sink
 * writes from the ring (or drops it), so the drain counts the records
 * there. round puts a pass's FINISHED_ROUND, flush queues its writes.
 * Bytes that are not ring data go through the same sink: extra (a
 * preamble; it takes buf) and pad (the direct stream's tail on disk).
 * A sink leaves NULL what it does not do. The sinks of a file hand what
 * they make to the recording's writer (write/write.h), which alone
 * knows how the file is written.
 */
struct record_sink {
	const char	*name;
	int		 reads_ring;
	int		 flush_idle;	/* flush after a pass that took nothing */
	int		(*room)(struct record *, struct record_cpu *,
			    struct tracefile *, struct record_take *, int last);
	ring_push_fn	 push;		/* to: the record_take */
	void		(*done)(struct record *, struct record_cpu *,
			    struct tracefile *, struct record_take *,
			    struct record_sweep *);
	void		(*round)(struct record *, struct tracefile *,
			    struct record_sweep *);
	void		(*flush)(struct record *, struct tracefile *,
			    struct record_sweep *, int last);
	int		(*extra)(struct record *, struct tracefile *,
			    uint8_t *buf, size_t len,
			    const struct tracefile_mark *);
	void		(*pad)(struct record *, struct tracefile *);
};

/* Choose the current file's sink (rec->sink), where the drain finds it:
 * every pass into one file takes the same one. Called by the loop,
 * under the lock, when what decides it changes: the current file
 * (record_set_file, also the loop's,
 * which every change of rec->cur goes through, and which has the writer
 * choose its mode for the file too), the write mode, a flight window,
 * the unwinding worker. */
void	record_sink_choose(struct record *);
void	record_set_file(struct record *, struct tracefile *);
/* The loop, under the lock: bytes that are not ring data (a preamble;
 * mark NULL) into tf through its sink; takes buf. */
int	record_write_extra(struct record *, struct tracefile *, uint8_t *,
	    size_t, const struct tracefile_mark *);
/* The current file's direct tail padded to disk, where it has one: in
 * the drain (the drain thread's pad pass, or the padder in the loop
 * when no thread runs). */
void	record_pad_tail(struct record *);
/* A rotation's walk begins and ends keeping the task records drained
 * meanwhile (rec->kept), under the lock: the loop begins and ends it,
 * the drain ends it when memory runs out. */
void	record_keep_begin(struct record *);
void	record_keep_end(struct record *);

/*
 * record-compact.c: call_graph "compact", the worker that unwinds the
 * rings' DWARF samples into plain callchains. Created with the
 * recording (loop), destroyed after its drain thread stopped; every
 * other function runs where the drain runs (the drain thread, or the
 * loop with the recording's lock held), and the worker is a thread of
 * its own that takes no lock of the recording.
 */
/* A rewritten sample's id: the kernel's with this bit, the id of the
 * unwound attr the preamble writes beside each event's own. */
#define RECORD_COMPACT_ID_BIT	(UINT64_C(1) << 63)
struct record_compact;
struct record_compact_item;
TAILQ_HEAD(record_compact_list, record_compact_item);
struct record_compact_stats {
	uint64_t	 unwound;	/* samples written unwound */
	uint64_t	 raw_samples;	/* ...written raw: the queue was full */
	uint64_t	 raw_chunks;	/* ...in so many ring chunks */
	uint64_t	 frames;	/* user addresses unwound */
	uint64_t	 stops[UNWIND_STOP_COUNT]; /* samples by why they ended */
	uint64_t	 kernel_only;	/* samples without a user stack */
	uint64_t	 unparsed;	/* samples not understood: left raw */
	uint64_t	 unpinned;	/* mappings whose file was gone */
	uint64_t	 model_oom;	/* maps not kept for want of memory */
	uint64_t	 cpu_ns;	/* the worker's CPU time */
	uint64_t	 binaries;	/* binaries the unwinder opened */
	uint64_t	 fallbacks;	/* samples its CFA tables left to
					 * libdwfl */
	uint64_t	 cache_bytes;	/* ...what they hold */
	uint64_t	 peak;		/* most bytes queued */
	uint64_t	 queued;	/* bytes queued now */
	uint64_t	 bound;		/* ...at most */
};
/* The unwinder's cache of binaries (their ELF and CFI), at most: the
 * binaries a busy machine runs at once took 17 MiB for 42 of them. */
#define RECORD_COMPACT_CACHE	((uint64_t)64 << 20)
/* The bytes of ring data the queue holds at most (memory budget). */
size_t	record_compact_bound(const struct config *, size_t ncpus);
struct record_compact *record_compact_create(const struct record *);
void	record_compact_destroy(struct record_compact *);
/* A ring's chunk for the worker: a buffer for it (t->copy, t->item), or
 * -1 when the queue is at its bound. */
int	record_compact_room(struct record_compact *, struct record_take *);
/* The chunk t->item holds made (record_chunk) and queued. */
void	record_compact_take(struct record_compact *, struct record *,
	    struct record_cpu *, struct tracefile *, struct record_take *);
/* A chunk is written raw: its task records (ring [from, to)) go to the
 * worker's maps, and rounds it holds are dropped; then counted. */
void	record_compact_raw(struct record_compact *, const uint8_t *data,
	    size_t size, uint64_t from, uint64_t to);
void	record_compact_raw_count(struct record_compact *, struct tracefile *,
	    uint64_t samples);
/* A preamble's (or carried task records') maps for the worker. */
void	record_compact_preamble(struct record_compact *, const uint8_t *buf,
	    size_t len);
/* A pass's FINISHED_ROUND, written behind the chunks queued before it. */
int	record_compact_round(struct record_compact *, struct tracefile *);
/* What the worker finished, written in order by write (tf's writer's
 * extra; it takes buf); last (a file's last drain) waits for all it
 * holds first. It ends each pass, and wakes the worker for what was
 * queued (the items above only queue). Bytes written. */
typedef int (*record_compact_write_fn)(struct record *, struct tracefile *,
	    uint8_t *, size_t, const struct tracefile_mark *);
size_t	record_compact_collect(struct record_compact *, struct record *,
	    int last, record_compact_write_fn);
void	record_compact_stats(struct record_compact *,
	    struct record_compact_stats *);
/* Its counts added to m's; status' "compact" object. */
void	record_compact_metrics(struct record_compact *, struct metrics *);
json_object *record_compact_status(struct record_compact *);

/* record-rotate.c: the next file's preamble and the switch to it. The
 * loop calls these; record_prep_run runs on the worker thread that
 * record_prep_spawn starts (or in the loop, for a start or a command);
 * record_drain_lost and record_take_over run where the drain runs. */
struct record_prep;
/* The loop, with or without the lock: it copies what only the loop
 * changes. */
struct record_prep *record_prep_create(struct record *, const char *why);
void	record_prep_run(struct record_prep *);
/* Build p on a thread; cb runs in the loop when it is done (arg: rec). */
int	record_prep_spawn(struct record *, struct record_prep *,
	    event_callback_fn);
/* The preamble the thread built (joined), or NULL. */
struct record_prep *record_prep_join(struct record *);
/* The loop: the thread joined (with the caller's lock, if it holds
 * it), keeping ended under the lock. */
void	record_prep_cancel(struct record *);
void	record_prep_free(struct record_prep *);
const char *record_prep_why(const struct record_prep *);
/* Its file, made in the loop, without the lock, before the switch. */
void	record_prep_open(struct record *, struct record_prep *);
/* A file's last drain: every ring, and once more each ring found full,
 * after the kernel's next write into it (its LOST record). In the drain:
 * a drain thread's switch, or the loop (a stop, its own switch); it
 * lets go of the lock while it waits (record_sleep). */
void	record_drain_lost(struct record *, struct record_pass *);
/* A new current file from p (start, resume), in the loop under the
 * lock. 0 or -1. */
int	record_install(struct record *, struct record_prep *);
int	record_open_file(struct record *);
/*
 * A rotation's switch to the file whose preamble p holds, as the loop
 * asks a drain thread for it (record_thread_switch) or makes it itself.
 * The drain's part (record_take_over, under the lock) fills in the rest:
 * rc 0 with old, the file it left (detached from the writer, for the
 * loop to close: record_closed), or -1 with the old file still current
 * (pass says whether its writes failed); failed, a new file to close
 * too (record_closed).
 */
struct record_switch {
	/* what makes it (record_take_over): named by the loop, so that the
	 * drain thread needs no arrow to record-rotate.c */
	void			(*make)(struct record *,
				    struct record_switch *);
	struct record_prep	*p;
	struct record_pass	 pass;		/* the old file's last drain */
	struct tracefile	*old;
	struct tracefile	*failed;	/* the new file, made but failed */
	int			 rc;
	atomic_int		 done;		/* answered (the drain thread) */
};
/* The switch's data part, in the drain (a drain thread's pass for the
 * loop, which waits meanwhile without the lock; or the loop, where no
 * drain thread runs or the loop's caller holds the lock): the old file
 * gets what the rings hold, the new one becomes current. */
void	record_take_over(struct record *, struct record_switch *);

/* record-rotate.c, for a snapshot's file, in the loop: p's preamble as
 * tf's head (its build-ids included); the bytes to write (taken from p),
 * or NULL. */
uint8_t	*record_prep_head(struct record_prep *, struct tracefile *, size_t *);
/* The (plain) task records of p's /proc walk, inside it, or NULL. */
const uint8_t *record_prep_tasks(const struct record_prep *, size_t *);
/* buf without the FORKs of the tasks p's preamble names; its length. */
size_t	record_prep_drop_forks(const struct record_prep *, uint8_t *, size_t);

/* record-window.c: a flight recording's memory, the drain's side. The
 * drain calls the hooks (record_window_take, record_window_round); the
 * loop calls the rest. */
/* The causes of snapshots still being finished, for their manifests. */
#define RECORD_FLIGHT_PENDING	8

struct record_flight {
	struct flight		 fl;
	struct flight_snap	 snap;		/* taken, waiting for its file */
	struct tracefile	*tf;		/* ...created at the snapshot */
	struct timespec		 t0;		/* when the snapshot began */
	struct {
		unsigned int	 seq;
		char		 why[RECORD_WHY_LEN];
		struct timespec	 t0;
	}			 pending[RECORD_FLIGHT_PENDING];
	size_t			 nr_pending;
	uint64_t		 snapshots;	/* finished whole */
	uint64_t		 failed;
	uint64_t		 last_ms;	/* the last one's time to finish */
	uint64_t		 stall_us_max;	/* the loop's longest part */
	char			 last_why[RECORD_WHY_LEN];
	char			 last_file[NAME_MAX + 1];
};

int	record_window_create(struct record *);
void	record_window_free(struct record *);
/* The drain's hooks: a ring's data into the window; a round closed. */
void	record_window_take(struct record *, struct record_cpu *,
	    struct record_take *);
void	record_window_round(struct record *);
/* A snapshot is being built: its file exists, its writes do not. */
int	record_window_busy(const struct record *);
/* A finished file: 1 and what took it when it was a snapshot. */
int	record_window_done(struct record *, const struct tracefile *,
	    int whole, char *why, size_t len);
uint64_t record_window_bytes(const struct record *);
/* In the loop, without the lock: c, the published counters, says what
 * the drain put into the window. */
json_object *record_window_status(struct record *,
	    const struct record_counters *c);
/* Microseconds since a; the loop's longest stall of a snapshot. */
uint64_t record_window_us(const struct timespec *);
void	record_window_stall(struct record_flight *, const struct timespec *);

/* record-flight.c: a flight recording's snapshots, in the loop */
/* The tasks alive at the start (a /proc walk) into the task store: a
 * task that exits before any snapshot is named by nothing else. 0/-1. */
int	record_flight_seed(struct record *);
/* Drain, take the window, create the file (*name: its final name). */
int	record_flight_begin(struct record *, const char *why,
	    const char **name);
/* Write the taken window after p's preamble and close the file. */
int	record_flight_write(struct record *, struct record_prep *);

/* record-file.c: files that stopped taking data, and the directory, in
 * the loop */
void	record_retry_unfinished(struct record *);
/* Put a file that takes no more data on the closing list: its writer's
 * part (record_detach_file) and the loop's (record_closed). */
void	record_close_file(struct record *, struct tracefile *);
/* The drain's side of a file's close, under the lock (the loop, or a
 * drain thread's switch): its open pool block goes to disk, the build-ids
 * read so far go into it. */
void	record_detach_file(struct record *, struct tracefile *);
/* The loop's side, which needs no lock (a switch's close is made
 * without it): the file is closed and its writes finish on the closing
 * list. */
void	record_closed(struct record *, struct tracefile *);
void	record_retire_file(struct record *);
/* The drain's lock held: the queue reaped, and the closing files whose
 * every request has landed moved to finishing (*landed of them).
 * Returns how many are still closing. */
size_t	record_reap_files(struct record *, size_t *landed);
/* Without the drain's lock: the landed files finished (header,
 * features, fsync, rename, the finish table's hooks) and freed. Returns
 * how many are not done yet (an fsync in flight). */
size_t	record_finish_files(struct record *);
/* A test hook's wait (the loop's, or a drain thread's): while the file
 * $var names exists (what: for the log). */
void	record_test_hold(const char *var, const char *what);
/* A test hook's pause (a drain's): the microseconds $var gives. */
void	record_test_gap(const char *var);
/* The output directory is back (0), or not yet (-1: look again later). */
int	record_find_dir(struct record *);
/* Bytes free in the output directory, or -1. */
int	record_free_bytes(struct record *, uint64_t *);

/* record-flush.c, under the lock (record.c takes it). The loop adds a
 * waiter and gets its ticket for the drain thread (0: too many wait), or
 * forgets it; the drain thread says that its flush pass is over
 * (record_flush_passed); the loop answers the flushes that landed
 * (record_flush_poll returns how many still wait), or every one when the
 * recording stops and its files are finished. */
uint64_t record_flush_add(struct record *, record_flushed_cb, void *);
void	record_flush_forget(struct record *, void *arg);
void	record_flush_passed(struct record *, uint64_t ticket);
size_t	record_flush_poll(struct record *);
void	record_flush_answer_all(struct record *);

/* record-status.c, in the loop */
json_object *record_totals(struct record *);

#endif
