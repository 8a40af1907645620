/*
 * record-file looks after the files of a recording once they stop taking
 * data: it closes and finishes them (their facts are handed to the
 * creator's finish table, record-finish.h, and retention runs through
 * it), and finishes later those a full disk left unfinished. It also
 * answers what the session asks of the output directory (its free
 * space, whether a removed one is back). Everything here runs in the
 * loop; only record_detach_file (a closing file's part of the writer)
 * and record_reap_files need the drain's lock, for the queue and the
 * current file they share with the drain thread, and a rotation's switch
 * calls record_detach_file on the drain thread that makes it. A file is finished without it (record_finish_files): its
 * fsync, rename, manifest and retention would otherwise hold the drain
 * thread back for milliseconds while the rings fill. Whether to pause
 * or resume is record.c's decision.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "record-int.h"
#include "size.h"

/* Seconds between looks for a removed output directory, at most. */
#define RECORD_RETRY_MAX	16

/* The test hook's hold of a finish, at most (polls of 5 ms: 60 s). */
#define RECORD_HOLD_POLLS	12000

/*
 * The files a full disk left unfinished, finished now that there may be
 * room for their header and features (salvage's way: the build-ids
 * learnt while recording are not in them), on the file worker: each is
 * handed to the salvage hook, which reads and finishes it off the loop.
 * A name stays listed while its .partial is there (a salvage that fails
 * leaves it for the next try); one being salvaged (held) is not handed
 * on twice. Past the list's end, salvage at the next start takes them.
 */
void
record_retry_unfinished(struct record *rec)
{
	struct record_files	*fs = &rec->files;
	struct stat		 st;
	char			 final[NAME_MAX + 1];
	size_t			 i, kept = 0, n;

	for (i = 0; i < fs->nr_unfinished; i++) {
		n = strlen(fs->unfinished[i]) - strlen(".partial");
		memcpy(final, fs->unfinished[i], n);
		final[n] = '\0';
		if (fstatat(rec->dirfd, fs->unfinished[i], &st,
		    AT_SYMLINK_NOFOLLOW) == -1 && errno == ENOENT) {
			/* finished (or kept as .damaged) */
			if (fstatat(rec->dirfd, final, &st,
			    AT_SYMLINK_NOFOLLOW) == 0)
				fs->done++;
			continue;
		}
		if (fs->finish->salvage != NULL &&
		    !fs->finish->holds(fs->finish_ctx, final))
			fs->finish->salvage(fs->finish_ctx, fs->unfinished[i]);
		if (kept != i)
			memcpy(fs->unfinished[kept], fs->unfinished[i],
			    sizeof(fs->unfinished[i]));
		kept++;
	}
	fs->nr_unfinished = kept;
}

/*
 * A test hook (var=PATH) holds the loop where it is called for as long
 * as PATH exists (60 s at most, so that a failed test cannot hang the
 * daemon): PERFSPILL_TEST_FINISH_HOLD in a file's finish, where its
 * facts are handed on, PERFSPILL_TEST_CREATE_HOLD before a rotation
 * creates its new file, PERFSPILL_TEST_SWITCH_HOLD where a rotation's
 * switch closes the old file. A finish that takes long (a slow disk's fsync,
 * a manifest, a JIT copy) or a file system slow to create a file must
 * not hold the drain thread back (tests/integration/test_drain.py).
 * Without PATH, or without the variable, nothing waits.
 */
void
record_test_hold(const char *var, const char *what)
{
	const char	*path = getenv(var);
	struct timespec	 ts = { 0, 5000000 };
	int		 i;

	if (path == NULL || path[0] == '\0' || access(path, F_OK) == -1)
		return;
	log_info("%s held by the test hook while %s exists", what, path);
	for (i = 0; i < RECORD_HOLD_POLLS && access(path, F_OK) == 0; i++)
		nanosleep(&ts, NULL);
	log_info("%s let go by the test hook", what);
}

/*
 * A test hook (var=MICROSECONDS, 100 ms at most) pauses a drain where it
 * is called: PERFSPILL_TEST_RING_GAP between the rings of a file's last
 * pass, which must not let a task's records straddle two files however
 * long one ring takes (tests/integration/test_order.py).
 */
void
record_test_gap(const char *var)
{
	const char	*v = getenv(var);
	unsigned long	 us;
	struct timespec	 ts;

	if (v == NULL || (us = strtoul(v, NULL, 10)) == 0)
		return;
	if (us > 100000)
		us = 100000;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)us * 1000;
	nanosleep(&ts, NULL);
}

/* Hand a closed file's facts on (the manifest, the hand-off, the rotate
 * waiters): before retention, which must know its hand-off holds it. */
static void
record_file_hook(struct record *rec, const struct tracefile *tf, int whole)
{
	struct record_file_facts	 f;
	struct tracefile_info		 info;
	char				 why[RECORD_WHY_LEN];
	char				 what[NAME_MAX + 16];

	snprintf(what, sizeof(what), "%s: finish", tracefile_name(tf));
	record_test_hold("PERFSPILL_TEST_FINISH_HOLD", what);
	tracefile_info(tf, &info);
	memset(&f, 0, sizeof(f));
	/* a flight recording's snapshot says what took it */
	if (record_window_done(rec, tf, whole, why, sizeof(why)))
		f.trigger = why;
	f.name = info.name;
	f.host = rec->host;
	f.session = rec->name[0] ? rec->name : "default";
	f.seq = info.seq;
	/* what the finished file holds: a cut drops what followed it */
	f.bytes = info.size;
	f.samples = info.kept.samples;
	f.lost = info.lost;
	f.lost_samples = info.lost_samples;
	f.compact = rec->cfg.callgraph == CONFIG_CG_COMPACT;
	f.unwound = info.compact_unwound;
	f.raw_samples = info.compact_raw;
	f.time_first = info.kept.first;
	f.time_last = info.kept.last;
	f.opened = info.opened;
	f.finished = time(NULL);
	f.cfg = &rec->cfg;
	f.buildids = info.buildids;
	f.buildids_len = info.buildids_len;
	rec->files.finish->file_done(rec->files.finish_ctx, &f, whole);
}

/* Retention, with what it removed counted for the daemon's metrics. */
int
record_retain(struct record *rec)
{
	int	 n;

	n = rec->files.finish->retain(rec->files.finish_ctx, rec->dirfd,
	    rec->cfg.max_files, rec->cfg.max_size, rec->cfg.min_free);
	if (n > 0)
		rec->life.files_removed += (uint64_t)n;
	return n;
}

static void
record_file_done(struct tracefile *tf, void *arg)
{
	struct record		*rec = arg;
	struct record_files	*fs = &rec->files;
	struct tracefile_info	 info;
	int			 whole = 0;

	tracefile_info(tf, &info);
	if (info.cut != UINT64_MAX)
		fs->bytes_cut += info.reserved - info.cut;
	if (info.removed) {
		log_warnx("%s: nothing recorded could be written (%s at "
		    "offset %" PRIu64 "); removed", info.partial,
		    strerror(info.err), info.cut);
	} else if (info.unfinished) {
		if (fs->nr_unfinished < RECORD_UNFINISHED_MAX)
			snprintf(fs->unfinished[fs->nr_unfinished++],
			    NAME_MAX + 1, "%s", info.partial);
	} else if (faccessat(rec->dirfd, info.name, F_OK,
	    AT_SYMLINK_NOFOLLOW) == -1) {
		/* renamed into a directory no one can reach, or not at all */
		fs->bytes_cut += info.cut != UINT64_MAX ? info.cut :
		    info.reserved;
		fs->lost++;
		snprintf(fs->problem, sizeof(fs->problem), "the output "
		    "directory %s was removed while recording: %" PRIu64
		    " file(s) lost, their bytes counted as dropped",
		    rec->cfg.output_dir, fs->lost);
		log_warnx("%s is lost with the output directory (%" PRIu64
		    " bytes, %" PRIu64 " samples)", info.name, info.reserved,
		    info.samples);
	} else {
		whole = 1;
		snprintf(fs->last, sizeof(fs->last), "%s", info.name);
		fs->done++;
		/* what the file holds: a cut drops the samples after it */
		log_info("finished %s (%" PRIu64 " bytes, %" PRIu64
		    " samples)", info.name, info.size, info.kept.samples);
	}
	record_file_hook(rec, tf, whole);
	if (whole && record_retain(rec) == -1)
		log_warn("retention: cannot scan the output directory");
}

/*
 * The build-ids of the files tf's tasks mapped, for its build_id feature,
 * written when the file is finished. Only the last file of a recording
 * waits (a bounded time, rings already closed) for ids still being read;
 * at a rotation they go to the next file.
 */
static void
record_add_buildids(struct record *rec, struct tracefile *tf)
{
	struct sbuf	 sb;
	int		 rc;

	/* what could be flushed goes in, also when not all could */
	sbuf_init(&sb);
	rc = buildid_flush(rec->bids, &sb, rec->state == RECORD_STOPPING ?
	    BUILDID_STOP_WAIT_MS : 0);
	if (tracefile_add_buildids(tf, sb.data, sb.len) == -1 || rc == -1)
		log_warnx("%s: out of memory for build-ids",
		    tracefile_partial(tf));
	sbuf_finish(&sb);
}

void
record_detach_file(struct record *rec, struct tracefile *tf)
{
	/* the pool's open block of tf goes to disk; its last bytes (under
	 * one alignment unit) go with the close (tracefile_direct_end) */
	writer_detach(&rec->w, tf);
	record_add_buildids(rec, tf);
}

/* The closing list and a file's state are the loop's alone: a rotation's
 * switch on a drain thread leaves this to the loop. */
void
record_closed(struct record *rec, struct tracefile *tf)
{
	tracefile_close(tf, record_file_done, rec);
	tracefile_list_add(&rec->files.closing, tf);
}

/* Put tf on the closing list; its writes finish there. */
void
record_close_file(struct record *rec, struct tracefile *tf)
{
	record_detach_file(rec, tf);
	record_closed(rec, tf);
}

/*
 * The current file, with no next one. A pause retires it without a last
 * drain; the sink's last flush still hands it what the unwinding worker
 * holds of it (the pass's rounds too): an item left naming it would be
 * written at the resume into a file the loop finished and freed.
 */
void
record_retire_file(struct record *rec)
{
	struct record_sweep	 w;

	if (rec->cur == NULL)
		return;
	memset(&w, 0, sizeof(w));
	if (rec->sink->flush != NULL)
		rec->sink->flush(rec, rec->cur, &w, 1);
	record_close_file(rec, rec->cur);
	record_set_file(rec, NULL);
}

/* The output directory is back (0), or not yet: try again later. */
int
record_find_dir(struct record *rec)
{
	time_t	 now = time(NULL);

	if (now < rec->files.retry_at)
		return -1;
	/* renamed back: the same directory, still ours, still locked */
	if (!outdir_gone(rec->dirfd, rec->cfg.output_dir) ||
	    outdir_reopen(rec->dirfd, rec->lockfd, rec->cfg.output_dir) == 0) {
		rec->files.dir_gone = 0;
		log_info("output directory %s is back", rec->cfg.output_dir);
		return 0;
	}
	if (errno == EWOULDBLOCK)
		/* made again, and another daemon took it meanwhile */
		snprintf(rec->paused, sizeof(rec->paused), "output directory "
		    "removed; made again, but another perfspilld holds it");
	else if (errno != ENOENT)
		log_warn("output directory %s", rec->cfg.output_dir);
	if (rec->files.retry_wait < RECORD_RETRY_MAX)
		rec->files.retry_wait *= 2;
	rec->files.retry_at = now + (time_t)rec->files.retry_wait;
	return -1;
}

int
record_free_bytes(struct record *rec, uint64_t *avail)
{
	return outdir_free_bytes(rec->dirfd, avail);
}

size_t
record_reap_files(struct record *rec, size_t *landed)
{
	struct tracefile	*tf, *next;
	size_t			 n = 0;

	*landed = 0;
	writer_reap(&rec->w);
	for (tf = TAILQ_FIRST(&rec->files.closing); tf != NULL; tf = next) {
		next = tracefile_list_next(tf);
		if (tracefile_landed(tf)) {
			tracefile_list_remove(&rec->files.closing, tf);
			tracefile_list_add(&rec->files.finishing, tf);
			(*landed)++;
		} else
			n++;
	}
	return n;
}

size_t
record_finish_files(struct record *rec)
{
	struct tracefile	*tf, *next;
	size_t			 n = 0;

	for (tf = TAILQ_FIRST(&rec->files.finishing); tf != NULL; tf = next) {
		next = tracefile_list_next(tf);
		if (tracefile_poll(tf)) {
			tracefile_list_remove(&rec->files.finishing, tf);
			tracefile_free(tf);
		} else
			n++;
	}
	return n;
}
