/*
 * daemon runs the life of perfspilld (see daemon.h): loading the
 * settings, wiring the parts together at start-up (record, hand-off,
 * control, notify, exporter, signals) and taking them apart at the end,
 * reload, shutdown and what happens when a file is done. It is the owner:
 * it calls the parts, and tells cmd.c what cmd.c must know (a file done,
 * settings changed); cmd.c reaches back only through the hooks set here.
 */
#include <aio.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cmd.h"
#include "config.h"
#include "control.h"
#include "daemon.h"
#include "exporter.h"
#include "fileworker.h"
#include "handoff.h"
#include "jitcopy.h"
#include "log.h"
#include "manifest.h"
#include "notify.h"
#include "paths.h"
#include "pidfile.h"
#include "record.h"
#include "retain.h"
#include "salvage.h"
#include "session.h"
#include "write.h"

static const int	 daemon_signos[DAEMON_NSIGNALS] = {
	SIGTERM, SIGINT, SIGHUP, SIGUSR2
};

int
daemon_load(struct daemon *d, struct config *cfg, struct config_error *err)
{
	const char	*path = d->config_path;

	config_defaults(cfg);
	if (path == NULL && access(PERFSPILL_CONFIG, F_OK) == 0)
		path = PERFSPILL_CONFIG;
	if (path != NULL && config_load(cfg, path, err) == -1)
		return -1;
	if (d->cli_socket != NULL)
		snprintf(cfg->socket_path, sizeof(cfg->socket_path), "%s",
		    d->cli_socket);
	if (d->cli_output_dir != NULL)
		snprintf(cfg->output_dir, sizeof(cfg->output_dir), "%s",
		    d->cli_output_dir);
	return 0;
}

/* A whole file waiting for its JIT maps: what its manifest and its
 * hand-off need once they are copied (the facts' strings copied, the
 * rest of them in the manifest built when the file finished). */
struct daemon_file {
	struct daemon		*d;
	struct record_file_facts	 mf;
	char			 name[NAME_MAX + 1];
	char			 host[256];
	char			 session[256];
	json_object		*manifest;
};

/* A whole file's manifest (the last thing written beside it: it lists the
 * maps) and hand-off, then the rotates waiting for it. In the loop. */
static void
daemon_file_ready(struct daemon *d, const struct record_file_facts *mf,
    json_object *manifest)
{
	int	 manifest_ok = 1;

	if ((manifest != NULL ? manifest_write_built(d->dirfd, mf->name,
	    manifest) : manifest_write(d->dirfd, mf)) == -1) {
		log_warn("%s: writing its manifest", mf->name);
		manifest_ok = 0;
	}
	handoff_add(d->handoff, mf, manifest_ok);
	cmd_file_done(d, mf->name, 1);
}

/* The JIT maps of a file are copied (jitcopy's worker): in the loop. */
static void
daemon_file_copied(void *arg, const char *name, const struct jitcopy_result
    *jr, int rc)
{
	struct daemon_file	*df = arg;
	struct daemon		*d = df->d;
	struct session		*s;

	(void)name;
	if (rc == 0) {
		df->mf.jit_pids = jr->pids;
		df->mf.jit_n = jr->n;
		manifest_set_jitmaps(df->manifest, &df->mf);
	}
	daemon_file_ready(d, &df->mf, df->manifest);
	/* retention held the file while it was copied: its turn now, by the
	 * settings of the recording that wrote it */
	if (d->sessions != NULL && (s = session_find(d->sessions,
	    df->mf.session)) != NULL)
		record_retain(session_record(s));
	json_object_put(df->manifest);
	free(df);
	d->files_copied++;
	cmd_files_copied(d);
}

/*
 * A file was closed (or salvaged: counted, already in files_queued). A
 * whole one gets its JIT maps and its manifest beside it (the manifest
 * last: it lists the maps), then its hand-off; then the rotates waiting
 * for it are answered either way. The maps are copied on the file
 * worker, which reads the file: the rest follows in daemon_file_copied,
 * and retention holds the file meanwhile (daemon_holds).
 */
static void
daemon_file_take(struct daemon *d, const struct record_file_facts *f,
    int whole, int counted)
{
	struct daemon_file	*df;

	if (!whole) {
		cmd_file_done(d, f->name, 0);
		return;
	}
	if (d->jitcopy == NULL || (df = calloc(1, sizeof(*df))) == NULL)
		goto ready;
	df->d = d;
	df->mf = *f;
	snprintf(df->name, sizeof(df->name), "%s", f->name);
	snprintf(df->host, sizeof(df->host), "%s", f->host);
	df->mf.name = df->name;
	df->mf.host = df->host;
	if (f->session != NULL) {
		snprintf(df->session, sizeof(df->session), "%s", f->session);
		df->mf.session = df->session;
	}
	/* what only the manifest needs is in it now */
	df->mf.cfg = NULL;
	df->mf.buildids = NULL;
	df->mf.buildids_len = 0;
	df->mf.trigger = NULL;
	if ((df->manifest = manifest_build(f)) == NULL ||
	    jitcopy_submit(d->jitcopy, d->dirfd, f->name, daemon_file_copied,
	    df) == -1) {
		json_object_put(df->manifest);
		free(df);
		goto ready;
	}
	if (!counted)
		d->files_queued++;
	return;
ready:
	daemon_file_ready(d, f, NULL);
	if (counted) {
		d->files_copied++;
		cmd_files_copied(d);
	}
}

static void
daemon_file_done(void *arg, const struct record_file_facts *f, int whole)
{
	daemon_file_take(arg, f, whole, 0);
}

/* A leftover's salvage is done (the file worker's): in the loop. */
static void
daemon_salvaged(void *arg, const char *name,
    const struct record_file_facts *f)
{
	struct daemon	*d = arg;

	(void)name;
	d->salvaging--;
	if (f != NULL) {
		daemon_file_take(d, f, 1, 1);
		return;
	}
	d->files_copied++;
	cmd_files_copied(d);
}

/* A leftover (a crash's at start, or a full disk's when space returns)
 * to salvage on the file worker, off the loop: counted in files_queued
 * until its copy is done, so that a stop's reply waits for it. */
static void
daemon_salvage(void *arg, const char *name)
{
	struct daemon	*d = arg;

	if (salvage_submit(d->fw, d->dirfd, name, daemon_salvaged, d) == -1) {
		log_warn("salvage: %s", name);
		return;
	}
	d->files_queued++;
	d->salvaging++;
}

/* Retention keeps a file while its hand-off or its JIT copy holds it. */
static int
daemon_holds(const char *name, void *arg)
{
	struct daemon	*d = arg;

	return handoff_holds(name, d->handoff) ||
	    fileworker_holds(d->fw, name);
}

static int
daemon_holding(void *arg, const char *name)
{
	return daemon_holds(name, arg);
}

static int
daemon_retain(void *arg, int dirfd, uint64_t max_files, uint64_t max_size,
    uint64_t min_free)
{
	return retain_enforce(dirfd, max_files, max_size, min_free,
	    daemon_holds, arg);
}

static int
daemon_kept(void *arg, int dirfd, struct record_kept *k)
{
	(void)arg;
	return retain_kept(dirfd, k);
}

/* A recording's tick: the JIT maps' look, which asks the file worker
 * for a scan only while a map's process lives. */
static void
daemon_tick(void *arg, uint64_t next_ms)
{
	struct daemon	*d = arg;

	jitcopy_look(d->jitcopy, next_ms);
}

/* What every recording hands its closed files to (record-finish.h):
 * finished/'s functions, reached from here, above both folders. */
static const struct record_finish_ops daemon_finish_ops = {
	.file_done = daemon_file_done,
	.holds = daemon_holding,
	.retain = daemon_retain,
	.kept = daemon_kept,
	.salvage = daemon_salvage,
	.tick = daemon_tick,
};

static int
daemon_reload(struct daemon *d, struct config_error *err)
{
	struct config	 cfg;

	notify_send(d->notify, "RELOADING=1");
	/* a config over the memory budget is refused as a broken one is,
	 * as configure cblocks= is: a reload cannot grow what it holds */
	if (daemon_load(d, &cfg, err) == -1 ||
	    cmd_settings_fit(d, &cfg, err) == -1) {
		log_warnx("reload refused, settings unchanged: %s", err->msg);
		notify_send(d->notify, "READY=1");
		return -1;
	}
	if (strcmp(cfg.socket_path, d->cfg.socket_path) != 0 ||
	    strcmp(cfg.output_dir, d->cfg.output_dir) != 0)
		log_warnx("socket and output_dir changes take effect at the "
		    "next daemon start");
	/* these stay as the running daemon uses them */
	memcpy(cfg.socket_path, d->cfg.socket_path, sizeof(cfg.socket_path));
	memcpy(cfg.output_dir, d->cfg.output_dir, sizeof(cfg.output_dir));
	d->cfg = cfg;
	control_update(d->ctl, &d->cfg);
	handoff_configure(d->handoff, &d->cfg);
	cmd_settings_changed(d);
	exporter_start(d);
	log_info("configuration reloaded");
	notify_send(d->notify, "READY=1");
	notify_status(d->notify);
	return 0;
}

static void
daemon_shutdown(struct daemon *d)
{
	if (d->exiting)
		return;
	notify_send(d->notify, "STOPPING=1");
	d->exiting = 1;
	/* every session's last file whole; cmd_stopped leaves the loop once
	 * none is busy */
	if (session_stop_all(d->sessions) > 0)
		log_info("shutting down: finishing the current files");
	else
		event_base_loopexit(d->base, NULL);
}

static void
daemon_signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct daemon		*d = arg;
	struct config_error	 err;

	switch (sig) {
	case SIGTERM:
	case SIGINT:
		daemon_shutdown(d);
		break;
	case SIGHUP:
		daemon_reload(d, &err);
		break;
	case SIGUSR2:
		/* as perf record --switch-output does on SIGUSR2, every
		 * session: rotate, or a flight recording's snapshot; each
		 * outcome (and a refusal's reason) is logged there */
		session_switch_output(d->sessions, "SIGUSR2");
		break;
	}
}

static void
daemon_status_line(char *buf, size_t len, void *arg)
{
	struct daemon	*d = arg;

	session_summary(d->sessions, buf, len);
}

void
daemon_init(struct daemon *d)
{
	memset(d, 0, sizeof(*d));
	d->dirfd = -1;
	d->lockfd = -1;
	d->reload = daemon_reload;
	d->shutdown = daemon_shutdown;
}

/*
 * The event loop, on the precise monotonic clock (with epoll, a timerfd).
 * On its default, the coarse clock (a jiffy of 4 ms here), a timer's
 * epoll_wait returns before the clock has reached the deadline, and
 * libevent waits again, 1 ms at a time, until it has: 1-3 wakeups more
 * for every timer that fires (the tick's, 0.5 a second; a stop's reaper,
 * about 15), which the recorder's wakeups counted. NULL without memory.
 */
static struct event_base *
daemon_base(void)
{
	struct event_config	*ec;
	struct event_base	*base;

	if ((ec = event_config_new()) == NULL)
		return NULL;
	event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
	base = event_base_new_with_config(ec);
	event_config_free(ec);
	return base;
}

void
daemon_start(struct daemon *d)
{
	struct config_error	 err;
	struct session_hooks	 hooks;
	struct aioinit		 ai;
	char			 pidbuf[CONFIG_PATH_LEN + 16];
	const char		*pidpath = d->cli_pid_file;
	long			 other;
	int			 i, saved;

	signal(SIGPIPE, SIG_IGN);
	memset(&ai, 0, sizeof(ai));
	/* glibc serves one fd's requests one at a time: a few threads carry
	 * the current file plus files being finished; keep them warm */
	ai.aio_threads = 4;
	ai.aio_num = 64;
	ai.aio_idle_time = 30;
	aio_init(&ai);

	/* a second daemon on one socket changes nothing, not even the
	 * output directory: it is refused before anything is made */
	if (control_taken(&d->cfg))
		fatalx("%s: another perfspilld is already listening; not "
		    "starting (nothing was created)", d->cfg.socket_path);
	if ((d->dirfd = outdir_create(d->cfg.output_dir)) == -1)
		fatal("output directory %s", d->cfg.output_dir);
	/* before salvage and retention: a second daemon changes nothing */
	if ((d->lockfd = outdir_lock(d->dirfd, d->cfg.output_dir)) == -1)
		fatalx("not starting; nothing in %s was changed",
		    d->cfg.output_dir);
	if ((d->base = daemon_base()) == NULL)
		fatalx("cannot create the event loop");
	for (i = 0; i < DAEMON_NSIGNALS; i++) {
		d->sigs[i] = evsignal_new(d->base, daemon_signos[i],
		    daemon_signal_cb, d);
		if (d->sigs[i] == NULL || evsignal_add(d->sigs[i], NULL) == -1)
			fatalx("cannot install signal handlers");
	}
	if ((d->handoff = handoff_create(d->base, d->dirfd)) == NULL)
		fatalx("cannot set up the on_finish hand-off");
	/* what the last daemon owed, before retention: it keeps those */
	handoff_configure(d->handoff, &d->cfg);
	handoff_resume(d->handoff);
	if ((d->fw = fileworker_create(d->base)) == NULL)
		fatalx("cannot start the thread that reads finished files");
	/* without it, files finish without their JIT maps */
	d->jitcopy = jitcopy_create(d->base, d->fw, NULL);
	/* a crash left .partial files: they are made whole on the file
	 * worker, with their manifests and hand-offs, while the loop runs
	 * (a file of a gigabyte takes seconds); retention holds them */
	salvage_list(d->dirfd, daemon_salvage, d);
	daemon_retain(d, d->dirfd, d->cfg.max_files, d->cfg.max_size,
	    d->cfg.min_free);
	memset(&hooks, 0, sizeof(hooks));
	hooks.finish = &daemon_finish_ops;
	hooks.finish_ctx = d;
	hooks.stopped = cmd_stopped;
	hooks.stopped_arg = d;
	if ((d->sessions = session_table_create(d->base, d->dirfd, d->lockfd,
	    &d->cfg, &hooks)) == NULL)
		fatal("cannot set up the recording sessions");
	d->rec = session_record(session_default(d->sessions));
	if ((d->ctl = control_create(d, cmd_dispatch, cmd_client_gone)) ==
	    NULL)
		fatalx("cannot open the control socket %s", d->cfg.socket_path);
	/* after the socket, whose directory exists now */
	if (pidpath == NULL) {
		pidfile_default(d->cfg.socket_path, pidbuf, sizeof(pidbuf));
		pidpath = pidbuf;
	}
	if ((d->pidfile = pidfile_create(pidpath, &other)) == NULL) {
		saved = errno;
		control_destroy(d->ctl);
		errno = saved;
		if (errno == EEXIST)
			fatalx("%s: another perfspilld (pid %ld) runs with this "
			    "pid file", pidpath, other);
		fatal("pid file %s", pidpath);
	}
	d->notify = notify_create(d->base, daemon_status_line, d);
	log_info("perfspilld %s started; trace files go to %s",
	    PERFSPILL_VERSION, d->cfg.output_dir);
	d->started = time(NULL);
	if (d->cfg.record_on_start &&
	    session_start(d->sessions, NULL, &d->cfg, 0, &err) == -1)
		log_warnx("cannot record at start: %s", err.msg);
	exporter_start(d);
	notify_send(d->notify, "READY=1");
	notify_status(d->notify);
}

void
daemon_finish(struct daemon *d)
{
	sigset_t	 block;
	int		 i;

	/*
	 * The last file is whole; what remains is freeing. A second SIGTERM
	 * now must not kill us with its default action once the loop's
	 * handlers are gone: block them, the exit status stays 0.
	 */
	sigemptyset(&block);
	for (i = 0; i < DAEMON_NSIGNALS; i++)
		sigaddset(&block, daemon_signos[i]);
	sigprocmask(SIG_BLOCK, &block, NULL);
	log_info("exiting");
	exporter_finish(d);
	/* the copies and salvages still queued finish first: their
	 * hand-offs are owed (marked) and their rotate waiters answered */
	fileworker_free(d->fw);
	d->fw = NULL;
	jitcopy_free(d->jitcopy);
	d->jitcopy = NULL;
	control_destroy(d->ctl);
	session_table_destroy(d->sessions);
	handoff_destroy(d->handoff);
	notify_destroy(d->notify);
	for (i = 0; i < DAEMON_NSIGNALS; i++)
		event_free(d->sigs[i]);
	event_base_free(d->base);
	close(d->dirfd);
	pidfile_destroy(d->pidfile);
	close(d->lockfd);
}
