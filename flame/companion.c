/*
 * companion: write and read NAME.data.folded (see companion.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "companion.h"

/* 4: raw DWARF samples' user stacks are unwound (a companion of 3 may
 * hold their sampled pc alone), names as perf report shows them */
#define COMPANION_MAGIC		"perfspill-folded 4"
/* far more than the stacks of any data file it may stand for */
#define COMPANION_MAX_SIZE	(1ULL << 30)

int
companion_name(const char *path, char *buf, size_t len)
{
	int	 n = snprintf(buf, len, "%s%s", path, COMPANION_SUFFIX);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static const char	 companion_kinds[] = "ukl";	/* enum stack_kind */

static int
companion_print(FILE *f, const struct stackset *ss,
    const struct companion_facts *cf)
{
	const struct stack	*st;
	size_t			 i, n = stackset_nstr(ss);
	uint32_t		 k;

	fprintf(f, "%s\nsource %" PRIu64 " %" PRId64 " %016" PRIx64
	    "\nsamples %" PRIu64
	    "\nfirst %" PRIu64 "\nlast %" PRIu64 "\nwall_offset %" PRId64
	    "\ncgroups %d\nhost %s\nstrings %zu\n", COMPANION_MAGIC,
	    cf->src_size, cf->src_mtime, cf->src_head, cf->samples, cf->first,
	    cf->last,
	    cf->wall_off, cf->cgroups, cf->host, n);
	for (i = 0; i < n; i++)
		fprintf(f, "s %c %s\n",
		    companion_kinds[stackset_kind(ss, (uint32_t)i)],
		    stackset_str(ss, (uint32_t)i));
	for (i = 0; i < stackset_nstacks(ss); i++) {
		st = stackset_stack(ss, i);
		fprintf(f, "c %" PRIu64 " %" PRIu32 " %" PRIu32 " %" PRIu32
		    " %" PRId64 " %" PRIu32, st->count, st->key.host,
		    st->key.event, st->key.comm, st->key.cgroup ==
		    STACKSET_NONE ? (int64_t)-1 : (int64_t)st->key.cgroup,
		    st->key.pid);
		for (k = 0; k < st->nframes; k++)
			fprintf(f, " %" PRIu32, st->frames[k]);
		fputc('\n', f);
	}
	fprintf(f, "end %zu\n", stackset_nstacks(ss));
	return ferror(f) ? -1 : 0;
}

int
companion_write(const char *path, const struct stackset *ss,
    const struct companion_facts *cf)
{
	char		 name[PATH_MAX], dir[PATH_MAX], proc[64];
	struct stat	 st;
	FILE		*f = NULL;
	int		 fd = -1, saved;

	if (companion_name(path, name, sizeof(name)) == -1 ||
	    snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* unnamed until whole: no reader ever sees half a companion, and
	 * a crash leaves nothing behind */
	if ((fd = open(dirname(dir), O_TMPFILE | O_WRONLY | O_CLOEXEC,
	    0640)) == -1)
		return -1;
	if ((f = fdopen(fd, "w")) == NULL)
		goto error;
	fd = -1;
	if (companion_print(f, ss, cf) == -1 || fflush(f) == EOF)
		goto error;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fileno(f));
	if (linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == -1) {
		if (errno != EEXIST)
			goto error;
		/* a stale one (its data file changed): ours replaces it */
		if (unlink(name) == -1 || linkat(AT_FDCWD, proc, AT_FDCWD,
		    name, AT_SYMLINK_FOLLOW) == -1)
			goto error;
	}
	fclose(f);
	/* retention may have removed the data file meanwhile: then the
	 * companion describes nothing */
	if (stat(path, &st) == -1 && errno == ENOENT)
		unlink(name);
	return 0;
error:
	saved = errno;
	if (f != NULL)
		fclose(f);
	if (fd != -1)
		close(fd);
	errno = saved;
	return -1;
}

/* "KEY VALUE" of the header into v (a number); 0 or -1. */
static int
companion_num(const char *line, const char *key, int64_t *v)
{
	size_t	 n = strlen(key);
	char	*e;

	if (strncmp(line, key, n) != 0 || line[n] != ' ')
		return -1;
	errno = 0;
	*v = strtoll(line + n + 1, &e, 10);
	return errno == 0 && (*e == '\n' || *e == '\0') ? 0 : -1;
}

static uint32_t
companion_id(const uint32_t *map, size_t n, int64_t v)
{
	if (v == -1)
		return STACKSET_NONE;
	if (v < 0 || (uint64_t)v >= n)
		return STACKSET_NONE - 1;	/* out of range: invalid */
	return map[v];
}

int
companion_read(const char *path, struct stackset *ss,
    const struct companion_facts *want, struct companion_facts *cf)
{
	char			 name[PATH_MAX], *line = NULL, *p, *e;
	size_t			 cap = 0, nstr = 0, i = 0, nst = 0;
	uint32_t		*map = NULL, frames[STACKSET_MAX_FRAMES];
	uint32_t		 nf, host = STACKSET_NONE;
	int64_t			 v[8], vals[6];
	struct stack_key	 k;
	ssize_t			 len;
	FILE			*f;
	const char		*kp;
	int			 done = 0, saved = EINVAL, fd;
	uint64_t		 head, total = 0;
	struct stat		 st;

	memset(cf, 0, sizeof(*cf));
	if (companion_name(path, name, sizeof(name)) == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* anyone who may write the directory may put anything there: a
	 * FIFO (O_NONBLOCK: no hang), a symlink to /dev/zero (O_NOFOLLOW) */
	if ((fd = open(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) == -1)
		return errno == ELOOP ? (errno = EPERM, -1) : -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > COMPANION_MAX_SIZE ||
	    (st.st_uid != 0 && st.st_uid != geteuid())) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	if ((f = fdopen(fd, "re")) == NULL) {
		close(fd);
		return -1;
	}
	if (getline(&line, &cap, f) == -1 ||
	    strcmp(line, COMPANION_MAGIC "\n") != 0)
		goto error;
	if (getline(&line, &cap, f) == -1 ||
	    sscanf(line, "source %" SCNd64 " %" SCNd64 " %" SCNx64, &v[0],
	    &v[1], &head) != 3)
		goto error;
	cf->src_size = (uint64_t)v[0];
	cf->src_mtime = v[1];
	cf->src_head = head;
	if (want != NULL && (cf->src_size != want->src_size ||
	    cf->src_mtime != want->src_mtime || (want->src_head != 0 &&
	    cf->src_head != want->src_head))) {
		saved = ESTALE;
		goto error;
	}
	if (getline(&line, &cap, f) == -1 ||
	    companion_num(line, "samples", &v[2]) == -1 ||
	    getline(&line, &cap, f) == -1 ||
	    companion_num(line, "first", &v[3]) == -1 ||
	    getline(&line, &cap, f) == -1 ||
	    companion_num(line, "last", &v[4]) == -1 ||
	    getline(&line, &cap, f) == -1 ||
	    companion_num(line, "wall_offset", &v[5]) == -1 ||
	    getline(&line, &cap, f) == -1 ||
	    companion_num(line, "cgroups", &v[6]) == -1 ||
	    (len = getline(&line, &cap, f)) < 6 ||
	    strncmp(line, "host ", 5) != 0)
		goto error;
	cf->samples = (uint64_t)v[2];
	cf->first = (uint64_t)v[3];
	cf->last = (uint64_t)v[4];

	cf->wall_off = v[5];
	cf->cgroups = v[6] != 0;
	line[len - 1] = '\0';
	snprintf(cf->host, sizeof(cf->host), "%s", line + 5);
	if (getline(&line, &cap, f) == -1 ||
	    companion_num(line, "strings", &v[7]) == -1 || v[7] < 0 ||
	    v[7] > UINT32_MAX / 2)
		goto error;
	if (ss == NULL) {
		free(line);
		fclose(f);
		return 0;
	}
	/* the host its manifest names now, when the caller knows it */
	if (want != NULL && want->host[0] != '\0' &&
	    (host = stackset_intern(ss, want->host, strlen(want->host),
	    STACK_LABEL)) == STACKSET_NONE) {
		saved = ENOMEM;
		goto error;
	}
	nstr = (size_t)v[7];
	if (nstr > 0 && (map = malloc(nstr * sizeof(*map))) == NULL) {
		saved = ENOMEM;
		goto error;
	}
	for (i = 0; i < nstr; i++) {
		if ((len = getline(&line, &cap, f)) < 5 || line[0] != 's' ||
		    line[1] != ' ' || line[3] != ' ' || line[len - 1] != '\n' ||
		    (kp = strchr(companion_kinds, line[2])) == NULL ||
		    line[2] == '\0')
			goto error;
		if ((map[i] = stackset_intern(ss, line + 4, (size_t)len - 5,
		    (enum stack_kind)(kp - companion_kinds))) ==
		    STACKSET_NONE) {
			saved = ENOMEM;
			goto error;
		}
	}
	while ((len = getline(&line, &cap, f)) != -1) {
		if (strncmp(line, "end ", 4) == 0) {
			done = strtoull(line + 4, NULL, 10) == nst;
			break;
		}
		if (line[0] != 'c' || line[1] != ' ')
			goto error;
		p = line + 2;
		for (i = 0; i < 6; i++) {
			errno = 0;
			vals[i] = strtoll(p, &e, 10);
			if (e == p || errno != 0)
				goto error;
			p = e;
		}
		for (nf = 0; *p == ' ' && nf < STACKSET_MAX_FRAMES; nf++) {
			errno = 0;
			v[0] = strtoll(p, &e, 10);
			if (e == p || errno != 0 || (frames[nf] =
			    companion_id(map, nstr, v[0])) >= STACKSET_NONE - 1)
				goto error;
			p = e;
		}
		if (*p != '\n' || vals[0] <= 0 || vals[5] < 0 ||
		    vals[5] > UINT32_MAX)
			goto error;
		k.host = host != STACKSET_NONE ? host :
		    companion_id(map, nstr, vals[1]);
		k.event = companion_id(map, nstr, vals[2]);
		k.comm = companion_id(map, nstr, vals[3]);
		k.cgroup = companion_id(map, nstr, vals[4]);
		k.pid = (uint32_t)vals[5];
		if (k.host == STACKSET_NONE - 1 || k.event >= STACKSET_NONE -
		    1 || k.comm >= STACKSET_NONE - 1 ||
		    k.cgroup == STACKSET_NONE - 1)
			goto error;
		if (stackset_add(ss, &k, frames, nf, (uint64_t)vals[0]) == -1) {
			saved = ENOMEM;
			goto error;
		}
		nst++;
		total += (uint64_t)vals[0];
	}
	if (!done || total != cf->samples)
		goto error;	/* cut short, or not adding up */
	free(map);
	free(line);
	fclose(f);
	return 0;
error:
	free(map);
	free(line);
	fclose(f);
	errno = saved;
	return -1;
}
