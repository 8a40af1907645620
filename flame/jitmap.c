/*
 * jitmap: read /tmp/perf-PID.map (see jitmap.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addrtab.h"
#include "jitmap.h"

#define JITMAP_MAX_SIZE	(64 << 20)

struct jitmap_ent {
	uint64_t	 start, end;
	char		*name;
};

struct jitmap {
	struct jitmap_ent	*e;
	size_t			 n, cap;
};

static int
jitmap_cmp(const void *a, const void *b)
{
	const struct jitmap_ent	*x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

struct jitmap *
jitmap_read(FILE *f)
{
	struct jitmap		*m;
	struct jitmap_ent	*tmp;
	char			*line = NULL, *p, *e;
	unsigned long long	 start, size;
	size_t			 cap = 0, l;
	ssize_t			 n;

	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	while ((n = getline(&line, &cap, f)) > 0) {
		start = strtoull(line, &e, 16);
		if (e == line || *e != ' ')
			continue;
		p = e + 1;
		size = strtoull(p, &e, 16);
		if (e == p || *e != ' ' || size == 0 || start + size < start)
			continue;
		p = e + 1;
		l = strcspn(p, "\n");
		if (m->n == m->cap) {
			m->cap = m->cap ? m->cap * 2 : 256;
			if ((tmp = realloc(m->e, m->cap * sizeof(*tmp))) == NULL)
				goto nomem;
			m->e = tmp;
		}
		if ((m->e[m->n].name = strndup(p, l)) == NULL)
			goto nomem;
		m->e[m->n].start = start;
		m->e[m->n].end = start + size;
		m->n++;
	}
	free(line);
	qsort(m->e, m->n, sizeof(*m->e), jitmap_cmp);
	return m;
nomem:
	free(line);
	jitmap_free(m);
	return NULL;
}

struct jitmap *
jitmap_load(uint32_t pid, char *err, size_t errlen)
{
	struct jitmap		*m;
	struct stat		 st;
	char			 path[64];
	FILE			*f;
	int			 fd;

	err[0] = '\0';
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) == -1) {
		if (errno != ENOENT)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > JITMAP_MAX_SIZE ||
	    (st.st_uid != 0 && st.st_uid != geteuid())) {
		snprintf(err, errlen, "%s: not a regular file of ours or "
		    "root's under %d MiB: ignored", path, JITMAP_MAX_SIZE >> 20);
		close(fd);
		return NULL;
	}
	if ((f = fdopen(fd, "r")) == NULL) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	if ((m = jitmap_read(f)) == NULL)
		snprintf(err, errlen, "%s: out of memory", path);
	fclose(f);
	return m;
}

void
jitmap_free(struct jitmap *m)
{
	size_t	 i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++)
		free(m->e[i].name);
	free(m->e);
	free(m);
}

const char *
jitmap_lookup(const struct jitmap *m, uint64_t addr)
{
	size_t	 i = addrtab_upto(m->e, m->n, sizeof(*m->e), addr);

	if (i == 0 || addr >= m->e[i - 1].end)
		return NULL;
	return m->e[i - 1].name;
}
