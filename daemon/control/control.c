/*
 * control serves the control socket and its clients (see control.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <systemd/sd-daemon.h>

#include "control.h"
#include "daemon.h"
#include "log.h"
#include "proto.h"

#define CONTROL_MAX_GROUPS	64

/*
 * Descriptors kept free for privileged peers and the daemon's own files
 * (a rotation's next file, a manifest, a hand-off's pipes, /proc reads):
 * an unprivileged peer is refused once fewer are left, a privileged one
 * makes room by closing the unprivileged client quiet longest, as for
 * max_clients. Without it, readers that take the last descriptors make
 * every accept fail (EMFILE) and root's own status with it.
 */
#define CONTROL_FD_RESERVE	32

/*
 * Replies a peer has not read yet. Above HIGH the daemon takes no more
 * requests from it (a status-only peer that pipelines status and never
 * reads would otherwise grow us without bound); below LOW it takes them
 * again. HIGH is checked before each request, so one reply at most goes
 * past it; MAX is the backstop for a reply that comes without a request
 * (stop's), past which the peer is dropped.
 */
#define CONTROL_OUT_HIGH	(256 * 1024)
#define CONTROL_OUT_LOW		(64 * 1024)
#define CONTROL_OUT_MAX		(16 * 1024 * 1024)

struct control_client {
	struct control		*ctl;
	struct bufferevent	*bev;
	/* a message not finished in time, or a peer dropped from inside a
	 * callback that still uses it: freed from here */
	struct event		*lost;
	const char		*lost_why;
	pid_t			 pid;
	uid_t			 uid;
	gid_t			 gid;
	gid_t			 groups[CONTROL_MAX_GROUPS];
	size_t			 ngroups;
	int			 privileged;
	uint64_t		 active;	/* ctl->seq at its last request */
	int			 deferred;	/* a reply is still to come */
	int			 throttled;	/* replies unread: not reading */
	int			 closing;	/* close once the reply is out */
	TAILQ_ENTRY(control_client) entry;
};

struct control {
	struct daemon		*d;
	control_dispatch_fn	 dispatch;	/* the creator's */
	control_gone_fn		 gone;
	struct evconnlistener	*lis;
	struct event		*backoff;
	char			 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int			 owns_path;	/* we created it: we unlink it */
	dev_t			 sock_dev;	/* the socket file we bound */
	ino_t			 sock_ino;
	int			 fd_reserve_said;	/* logged once */
	gid_t			 ctl_gids[CONFIG_MAX_GROUPS];
	size_t			 nr_ctl_gids;
	int			 nclients;
	uint64_t		 seq;		/* counts accepts and requests */
	TAILQ_HEAD(, control_client) clients;
};

static void	control_client_free(struct control_client *);

/* Is a live daemon listening on path? Decides whether a leftover socket
 * file may be removed. */
static int
control_in_use(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd, rc;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	return rc;
}

static int
control_mkdir_parent(const char *path)
{
	char	 dir[sizeof(((struct sockaddr_un *)0)->sun_path)], *p;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((p = strrchr(dir, '/')) == NULL || p == dir)
		return 0;
	*p = '\0';
	if (mkdir(dir, 0755) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/* The socket file at ctl->path, without following a symlink: an O_PATH
 * descriptor and its stat, or -1. */
static int
control_socket_open(const struct control *ctl, struct stat *st)
{
	int	 fd;

	if ((fd = open(ctl->path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, st) == -1 || !S_ISSOCK(st->st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The socket file's group and mode: who may connect at all. Changed on
 * the very file we bound, found again without following a symlink: the
 * socket's directory may be writable by others, and a name there
 * replaced by a symlink must not make root chown or chmod its target.
 * (chmod through /proc/self/fd: Linux 6.1 has no fchmodat on an O_PATH
 * descriptor; the magic link names the inode we hold, not a path.)
 */
static void
control_socket_access(struct control *ctl, const struct config *cfg)
{
	struct group	*gr;
	struct stat	 st;
	char		 proc[64];
	int		 fd;

	if ((fd = control_socket_open(ctl, &st)) == -1 ||
	    st.st_dev != ctl->sock_dev || st.st_ino != ctl->sock_ino) {
		log_warnx("%s is no longer the socket this daemon bound; its "
		    "mode and group are left alone", ctl->path);
		if (fd != -1)
			close(fd);
		return;
	}
	if ((gr = getgrnam(cfg->socket_group)) != NULL) {
		if (fchownat(fd, "", 0, gr->gr_gid, AT_EMPTY_PATH) == -1)
			log_warn("chown %s to group %s", ctl->path,
			    cfg->socket_group);
	} else
		log_warnx("group '%s' does not exist; %s stays in root's "
		    "group (create it with systemd-sysusers)",
		    cfg->socket_group, ctl->path);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (chmod(proc, cfg->socket_mode) == -1)
		log_warn("chmod %s", ctl->path);
	close(fd);
}

/* The gids of control_groups; a group that does not exist is skipped. */
static void
control_groups(struct control *ctl, const struct config *cfg)
{
	struct group	*gr;
	size_t		 i;

	ctl->nr_ctl_gids = 0;
	for (i = 0; i < cfg->nr_control_groups; i++) {
		if ((gr = getgrnam(cfg->control_groups[i])) == NULL) {
			log_warnx("control group '%s' does not exist; ignored",
			    cfg->control_groups[i]);
			continue;
		}
		ctl->ctl_gids[ctl->nr_ctl_gids++] = gr->gr_gid;
	}
}

static int
control_listen_path(struct control *ctl, const struct config *cfg)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	mode_t			 old;
	int			 fd, sfd;

	if (strlen(cfg->socket_path) >= sizeof(ctl->path)) {
		log_warnx("socket path %s is too long", cfg->socket_path);
		return -1;
	}
	memcpy(ctl->path, cfg->socket_path, strlen(cfg->socket_path) + 1);
	if (control_mkdir_parent(ctl->path) == -1) {
		log_warn("cannot create the directory of %s", ctl->path);
		return -1;
	}
	if (lstat(ctl->path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_warnx("%s exists and is not a socket; not touching "
			    "it", ctl->path);
			return -1;
		}
		if (control_in_use(ctl->path)) {
			log_warnx("%s: another perfspilld is already listening",
			    ctl->path);
			return -1;
		}
		unlink(ctl->path);	/* left by a daemon that died */
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return -1;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", ctl->path);
	/* never let the socket exist, even briefly, with a wider mode */
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		umask(old);
		log_warn("bind %s", ctl->path);
		close(fd);
		return -1;
	}
	umask(old);
	ctl->owns_path = 1;
	/* what the mode and group apply to, now and at each reload: only
	 * root can touch the file yet (umask), the directory's other
	 * writers can only swap in a socket of their own */
	if ((sfd = control_socket_open(ctl, &st)) == -1) {
		log_warnx("%s: not the socket just bound", ctl->path);
		close(fd);
		return -1;
	}
	ctl->sock_dev = st.st_dev;
	ctl->sock_ino = st.st_ino;
	close(sfd);
	/* listening before the mode is widened: a client that sees the file
	 * can connect (no ECONNREFUSED window), and until then only root can */
	if (listen(fd, 64) == -1) {
		log_warn("listen %s", ctl->path);
		close(fd);
		return -1;
	}
	control_socket_access(ctl, cfg);
	return fd;
}

static void
control_peer_identify(struct control_client *c, int fd)
{
	struct ucred	 cred;
	socklen_t	 len = sizeof(cred);
	socklen_t	 glen = sizeof(c->groups);

	c->uid = (uid_t)-1;
	c->gid = (gid_t)-1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		c->pid = cred.pid;
		c->uid = cred.uid;
		c->gid = cred.gid;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, c->groups, &glen) == 0)
		c->ngroups = glen / sizeof(gid_t);
}

/* Changing anything needs root or a configured control group. Run at
 * accept and again when a reload changes the groups. */
static void
control_peer_authorize(struct control *ctl, struct control_client *c)
{
	size_t	 i, j;

	c->privileged = c->uid == 0;
	for (i = 0; i < ctl->nr_ctl_gids && !c->privileged; i++) {
		if (c->gid == ctl->ctl_gids[i])
			c->privileged = 1;
		for (j = 0; j < c->ngroups; j++)
			if (c->groups[j] == ctl->ctl_gids[i])
				c->privileged = 1;
	}
}

/* Drop c from a callback that may still use it: the free runs from the
 * loop, and nothing more is read from or written to c meanwhile. */
static void
control_client_drop(struct control_client *c, const char *why)
{
	c->closing = 1;
	c->lost_why = why;
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	event_active(c->lost, EV_TIMEOUT, 0);
}

static void
control_lost_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control_client	*c = arg;

	log_info("client pid %d uid %d: %s; closing", (int)c->pid,
	    (int)c->uid, c->lost_why != NULL ? c->lost_why :
	    "message not finished within client_timeout");
	control_client_free(c);
}

/*
 * A partial message is timed from its first byte: more bytes of it do not
 * restart the clock (the idle timeout would, so a peer dripping a byte at
 * a time could hold a slot for ever). done says a whole message was taken
 * since the last call, so what is left began after it.
 */
static void
control_client_partial(struct control_client *c, int done)
{
	struct timeval	 tv;
	int		 partial;

	if (c->lost_why != NULL)
		return;		/* dropped: the free is already on its way */
	/* while we do not read (stop pending, replies unread) the peer is
	 * not the one who is slow */
	partial = !c->deferred && !c->throttled && !c->closing &&
	    evbuffer_get_length(bufferevent_get_input(c->bev)) > 0;
	if (done || !partial)
		evtimer_del(c->lost);
	if (!partial || evtimer_pending(c->lost, NULL))
		return;
	tv.tv_sec = (time_t)c->ctl->d->cfg.client_timeout;
	tv.tv_usec = 0;
	evtimer_add(c->lost, &tv);
}

static void
control_read_cb(struct bufferevent *bev, void *arg)
{
	struct control_client	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_ptr	 eol;
	json_object		*req, *args;
	const char		*cmd;
	char			 err[256], *line;
	size_t			 len, n;
	enum proto_err		 rc;
	int			 done = 0;

	while (!c->deferred && !c->closing) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) >
		    CONTROL_OUT_HIGH) {
			/* the write callback resumes once the peer reads */
			c->throttled = 1;
			bufferevent_disable(bev, EV_READ);
			break;
		}
		len = evbuffer_get_length(in);
		if (len == 0)
			break;
		eol = evbuffer_search_eol(in, NULL, &n, EVBUFFER_EOL_LF);
		if (eol.pos == -1 || (size_t)eol.pos >= PROTO_MAX_MSG) {
			if (len < PROTO_MAX_MSG && eol.pos == -1)
				break;		/* wait for the rest */
			snprintf(err, sizeof(err), "message exceeds the limit of "
			    "%d bytes", PROTO_MAX_MSG);
			c->closing = 1;
			control_client_reply(c, proto_reply_error(
			    PROTO_E_TOO_BIG, NULL, err));
			return;
		}
		len = (size_t)eol.pos;
		if ((line = malloc(len + 1)) == NULL) {
			control_client_free(c);
			return;
		}
		evbuffer_remove(in, line, len);
		evbuffer_drain(in, n);
		line[len] = '\0';
		done = 1;
		c->active = ++c->ctl->seq;
		rc = proto_parse_request(line, len, &req, &cmd, &args, err,
		    sizeof(err));
		free(line);
		if (rc != PROTO_OK) {
			control_client_reply(c, proto_reply_error(rc, NULL,
			    err));
			continue;
		}
		c->ctl->dispatch(c->ctl->d, c, cmd, args);
		json_object_put(req);
		if (c->deferred)
			bufferevent_disable(bev, EV_READ);
	}
	control_client_partial(c, done);
}

/* The output went down to CONTROL_OUT_LOW (or to nothing). */
static void
control_write_cb(struct bufferevent *bev, void *arg)
{
	struct control_client	*c = arg;
	size_t			 len;

	len = evbuffer_get_length(bufferevent_get_output(bev));
	if (c->closing) {
		if (len == 0)
			control_client_free(c);
		return;
	}
	if (c->throttled && len <= CONTROL_OUT_LOW) {
		c->throttled = 0;
		bufferevent_enable(bev, EV_READ);
		/* requests that waited in the buffer */
		control_read_cb(bev, c);
	}
}

static void
control_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct control_client	*c = arg;

	if (what & BEV_EVENT_TIMEOUT)
		log_debug("client pid %d idle too long; closing", (int)c->pid);
	/* EOF, error and timeout: the one peer-lost path */
	control_client_free(c);
}

static void
control_client_free(struct control_client *c)
{
	struct control	*ctl = c->ctl;

	ctl->gone(ctl->d, c);
	TAILQ_REMOVE(&ctl->clients, c, entry);
	ctl->nclients--;
	event_free(c->lost);
	bufferevent_free(c->bev);
	free(c);
}

/* Idle (nothing sent) and stalled (replies not read) for client_timeout
 * seconds: either closes the client. */
static void
control_client_timeouts(struct control_client *c)
{
	struct timeval	 tv;

	tv.tv_sec = (time_t)c->ctl->d->cfg.client_timeout;
	tv.tv_usec = 0;
	bufferevent_set_timeouts(c->bev, &tv, &tv);
}

/* Tell a peer it cannot be served, without waiting on it. */
static void
control_send_busy(int fd, const char *why)
{
	json_object	*o;
	char		*msg;
	size_t		 len;

	o = proto_reply_error(PROTO_E_BUSY, NULL, why);
	if ((msg = proto_serialize(o, &len)) != NULL) {
		if (send(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			log_debug("busy reply not sent");
		free(msg);
	}
	json_object_put(o);
}

/*
 * Every slot is taken and a privileged peer knocks: make room by closing
 * the unprivileged client that has been quiet longest, so that peers who
 * may only read status can never lock root out. -1 when every slot is
 * held by privileged peers.
 */
static int
control_evict(struct control *ctl, const char *why)
{
	struct control_client	*c, *victim = NULL;

	TAILQ_FOREACH(c, &ctl->clients, entry) {
		if (c->privileged || c->closing)
			continue;
		if (victim == NULL || c->active < victim->active)
			victim = c;
	}
	if (victim == NULL)
		return -1;
	log_info("client pid %d uid %d closed to make room for a privileged "
	    "peer (%s)", (int)victim->pid, (int)victim->uid, why);
	if (evbuffer_get_length(bufferevent_get_output(victim->bev)) == 0)
		control_send_busy(bufferevent_getfd(victim->bev), "closed to "
		    "make room for a privileged client");
	control_client_free(victim);
	return 0;
}

/* Descriptors this process may still open: its limit less those open
 * (counted in /proc/self/fd, whose own descriptor is not counted). */
static long
control_fds_free(void)
{
	struct rlimit	 rl;
	DIR		*dir;
	long		 n = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 ||
	    rl.rlim_cur == RLIM_INFINITY)
		return LONG_MAX;
	if ((dir = opendir("/proc/self/fd")) == NULL)
		return errno == EMFILE || errno == ENFILE ? 0 : LONG_MAX;
	while (readdir(dir) != NULL)
		n++;
	closedir(dir);
	/* ".", ".." and the directory's own */
	return (long)rl.rlim_cur - (n - 3);
}

static void
control_accept_cb(struct evconnlistener *lis, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct control		*ctl = arg;
	struct control_client	*c;
	long			 nfree;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return;
	}
	c->ctl = ctl;
	control_peer_identify(c, fd);
	control_peer_authorize(ctl, c);
	if ((uint64_t)ctl->nclients >= ctl->d->cfg.max_clients &&
	    (!c->privileged || control_evict(ctl, "max_clients reached") ==
	    -1)) {
		control_send_busy(fd, "too many clients; try again later");
		close(fd);
		free(c);
		return;
	}
	if ((nfree = control_fds_free()) < CONTROL_FD_RESERVE) {
		if (!ctl->fd_reserve_said) {
			ctl->fd_reserve_said = 1;
			log_warnx("%ld file descriptors left (RLIMIT_NOFILE): "
			    "the last %d are kept for privileged peers and the "
			    "daemon's own files; unprivileged clients are "
			    "refused while fewer are free (said once)", nfree,
			    CONTROL_FD_RESERVE);
		}
		/* a privileged peer gives one back in its place */
		if (c->privileged)
			control_evict(ctl, "file descriptors low");
		else {
			control_send_busy(fd, "too many clients for the "
			    "daemon's file descriptors; try again later");
			close(fd);
			free(c);
			return;
		}
	}
	c->bev = bufferevent_socket_new(ctl->d->base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	c->lost = evtimer_new(ctl->d->base, control_lost_cb, c);
	if (c->bev == NULL || c->lost == NULL) {
		if (c->bev != NULL)
			bufferevent_free(c->bev);
		else
			close(fd);
		if (c->lost != NULL)
			event_free(c->lost);
		free(c);
		return;
	}
	c->active = ++ctl->seq;
	TAILQ_INSERT_TAIL(&ctl->clients, c, entry);
	ctl->nclients++;
	bufferevent_setcb(c->bev, control_read_cb, control_write_cb,
	    control_event_cb, c);
	/* never buffer more than one message: a peer cannot grow us */
	bufferevent_setwatermark(c->bev, EV_READ, 0, PROTO_MAX_MSG + 1);
	/* wake the write callback when a throttled peer has read enough */
	bufferevent_setwatermark(c->bev, EV_WRITE, CONTROL_OUT_LOW, 0);
	control_client_timeouts(c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

static void
control_backoff_cb(evutil_socket_t fd, short what, void *arg)
{
	struct control	*ctl = arg;

	evconnlistener_enable(ctl->lis);
}

static void
control_error_cb(struct evconnlistener *lis, void *arg)
{
	struct control	*ctl = arg;
	struct timeval	 tv = { 1, 0 };
	int		 e = EVUTIL_SOCKET_ERROR();

	/* out of fds: stop accepting for a second instead of spinning */
	log_warnx("accept on the control socket: %s; pausing for 1s",
	    strerror(e));
	evconnlistener_disable(lis);
	event_add(ctl->backoff, &tv);
}

int
control_taken(const struct config *cfg)
{
	struct stat	 st;

	if (sd_listen_fds(0) > 0)
		return 0;
	return lstat(cfg->socket_path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    control_in_use(cfg->socket_path);
}

struct control *
control_create(struct daemon *d, control_dispatch_fn dispatch,
    control_gone_fn gone)
{
	struct control	*ctl;
	int		 fd = -1, n;

	if ((ctl = calloc(1, sizeof(*ctl))) == NULL)
		return NULL;
	ctl->d = d;
	ctl->dispatch = dispatch;
	ctl->gone = gone;
	TAILQ_INIT(&ctl->clients);
	control_groups(ctl, &d->cfg);
	n = sd_listen_fds(1);
	if (n > 1) {
		log_warnx("systemd passed %d sockets; expected one", n);
		goto error;
	}
	if (n == 1) {
		fd = SD_LISTEN_FDS_START;
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0) {
			log_warnx("the socket systemd passed is not a listening "
			    "UNIX stream socket");
			goto error;
		}
		evutil_make_socket_nonblocking(fd);
		evutil_make_socket_closeonexec(fd);
		log_info("listening on the socket passed by systemd");
	} else if ((fd = control_listen_path(ctl, &d->cfg)) == -1)
		goto error;
	else
		log_info("listening on %s", ctl->path);
	ctl->lis = evconnlistener_new(d->base, control_accept_cb, ctl,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (ctl->lis == NULL) {
		close(fd);
		goto error;
	}
	evconnlistener_set_error_cb(ctl->lis, control_error_cb);
	ctl->backoff = evtimer_new(d->base, control_backoff_cb, ctl);
	return ctl;
error:
	control_destroy(ctl);
	return NULL;
}

void
control_destroy(struct control *ctl)
{
	struct control_client	*c;

	if (ctl == NULL)
		return;
	while ((c = TAILQ_FIRST(&ctl->clients)) != NULL)
		control_client_free(c);
	if (ctl->lis != NULL)
		evconnlistener_free(ctl->lis);
	if (ctl->backoff != NULL)
		event_free(ctl->backoff);
	if (ctl->owns_path)
		unlink(ctl->path);
	free(ctl);
}

void
control_update(struct control *ctl, const struct config *cfg)
{
	struct control_client	*c;
	int			 was;

	control_groups(ctl, cfg);
	TAILQ_FOREACH(c, &ctl->clients, entry) {
		was = c->privileged;
		control_peer_authorize(ctl, c);
		if (was && !c->privileged)
			log_info("client pid %d uid %d is no longer in a "
			    "control group", (int)c->pid, (int)c->uid);
		control_client_timeouts(c);
	}
	if (ctl->owns_path)
		control_socket_access(ctl, cfg);
}

int
control_nclients(const struct control *ctl)
{
	return ctl->nclients;
}

uid_t
control_client_uid(const struct control_client *c)
{
	return c->uid;
}

int
control_client_privileged(const struct control_client *c)
{
	return c->privileged;
}

void
control_client_reply(struct control_client *c, json_object *o)
{
	char	*msg;
	size_t	 len;

	msg = proto_serialize(o, &len);
	json_object_put(o);
	if (msg == NULL) {
		control_client_free(c);
		return;
	}
	if (c->lost_why != NULL) {
		free(msg);		/* dropped: nothing more goes out */
		return;
	}
	bufferevent_write(c->bev, msg, len);
	free(msg);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) >
	    CONTROL_OUT_MAX) {
		control_client_drop(c, "replies not read past the limit");
		return;
	}
	if (c->deferred) {
		/* the late reply is out: take requests again */
		c->deferred = 0;
		bufferevent_enable(c->bev, EV_READ);
		/* requests that arrived meanwhile wait in the buffer */
		control_read_cb(c->bev, c);
	}
}

void
control_client_defer(struct control_client *c)
{
	c->deferred = 1;
}
