/*
 * jitsym: the JIT maps of a trace file's companion tar (see jitsym.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitsym.h"

struct jitsym_proc {
	uint32_t	 pid;
	struct jitmap	*map;
};

struct jitsym {
	struct jitsym_proc	*p;
	size_t			 n, cap;
};

static int
jitsym_cmp(const void *a, const void *b)
{
	const struct jitsym_proc	*x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* "perf-PID.map" of name[0..len): its pid, or 0. */
static uint32_t
jitsym_member_pid(const char *name, size_t len)
{
	uint64_t	 pid = 0;
	size_t		 i;

	if (len < 10 || memcmp(name, "perf-", 5) != 0 ||
	    memcmp(name + len - 4, ".map", 4) != 0 || name[5] < '1' ||
	    name[5] > '9')
		return 0;
	for (i = 5; i < len - 4; i++)
		if (name[i] < '0' || name[i] > '9' ||
		    (pid = pid * 10 + (uint64_t)(name[i] - '0')) > INT32_MAX)
			return 0;
	return (uint32_t)pid;
}

static uint64_t
jitsym_octal(const uint8_t *s, size_t len, int *ok)
{
	uint64_t	 v = 0;
	size_t		 i = 0;

	while (i < len && s[i] == ' ')
		i++;
	if (i == len || s[i] < '0' || s[i] > '7')
		*ok = 0;
	for (; i < len && s[i] >= '0' && s[i] <= '7'; i++)
		v = v << 3 | (uint64_t)(s[i] - '0');
	return v;
}

/* One member's map, read as the live file is. */
static int
jitsym_member(struct jitsym *js, uint32_t pid, const uint8_t *data,
    size_t size)
{
	struct jitsym_proc	*tmp;
	FILE			*f;

	if (js->n == js->cap) {
		js->cap = js->cap ? js->cap * 2 : 16;
		if ((tmp = reallocarray(js->p, js->cap, sizeof(*tmp))) == NULL)
			return -1;
		js->p = tmp;
	}
	/* fmemopen refuses a size of 0: an empty map names nothing */
	if (size == 0 || (f = fmemopen((void *)(uintptr_t)data, size,
	    "r")) == NULL)
		return size == 0 ? 0 : -1;
	js->p[js->n].pid = pid;
	js->p[js->n].map = jitmap_read(f);
	fclose(f);
	if (js->p[js->n].map == NULL)
		return -1;
	js->n++;
	return 0;
}

static int
jitsym_parse(struct jitsym *js, const uint8_t *map, size_t len)
{
	static const uint8_t	 zero[512];
	const uint8_t		*h;
	uint64_t		 size;
	size_t			 off = 0;
	uint32_t		 pid;
	int			 ok;

	while (len - off >= 512) {
		h = map + off;
		if (memcmp(h, zero, 512) == 0)
			return 0;	/* the end blocks */
		ok = memcmp(h + 257, "ustar", 5) == 0;
		size = jitsym_octal(h + 124, 12, &ok);
		if (!ok || size > len - off - 512) {
			errno = EINVAL;
			return -1;
		}
		off += 512;
		/* perf-PID.map; any other member is not ours to read */
		if ((h[156] == '0' || h[156] == '\0') && (pid =
		    jitsym_member_pid((const char *)h, strnlen((const char *)h,
		    100))) != 0 && jitsym_member(js, pid, map + off,
		    (size_t)size) == -1)
			return -1;
		off += (size_t)((size + 511) / 512 * 512);
		if (off > len)
			break;
	}
	return 0;
}

struct jitsym *
jitsym_load(const char *path)
{
	struct jitsym	*js = NULL;
	struct stat	 st;
	char		 name[PATH_MAX];
	uint8_t		*map = MAP_FAILED;
	int		 fd, saved;

	if (snprintf(name, sizeof(name), "%s%s", path, JITSYM_SUFFIX) >=
	    (int)sizeof(name)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if ((fd = open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return NULL;
	if ((js = calloc(1, sizeof(*js))) == NULL || fstat(fd, &st) == -1)
		goto error;
	if (!S_ISREG(st.st_mode) || st.st_size < 512) {
		errno = EINVAL;
		goto error;
	}
	if ((map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
	    0)) == MAP_FAILED || jitsym_parse(js, map, (size_t)st.st_size) ==
	    -1)
		goto error;
	munmap(map, (size_t)st.st_size);
	close(fd);
	qsort(js->p, js->n, sizeof(*js->p), jitsym_cmp);
	return js;
error:
	saved = errno;
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	close(fd);
	jitsym_free(js);
	errno = saved;
	return NULL;
}

void
jitsym_free(struct jitsym *js)
{
	size_t	 i;

	if (js == NULL)
		return;
	for (i = 0; i < js->n; i++)
		jitmap_free(js->p[i].map);
	free(js->p);
	free(js);
}

const struct jitmap *
jitsym_map(const struct jitsym *js, uint32_t pid)
{
	struct jitsym_proc	 key, *p;

	if (js == NULL)
		return NULL;
	key.pid = pid;
	p = bsearch(&key, js->p, js->n, sizeof(*js->p), jitsym_cmp);
	return p != NULL ? p->map : NULL;
}

size_t
jitsym_count(const struct jitsym *js)
{
	return js != NULL ? js->n : 0;
}
