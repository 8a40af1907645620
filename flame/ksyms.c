/*
 * ksyms: /proc/kallsyms for the kernel of a trace file (see ksyms.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addrtab.h"
#include "ksyms.h"

#define KSYMS_NT_GNU_BUILD_ID	3

struct ksyms_ent {
	uint64_t	 addr;
	uint32_t	 name;		/* in the arena */
};

struct ksyms {
	struct ksyms_ent	*e;
	size_t			 n, cap;
	char			*arena;
	size_t			 alen, acap;
};

/* This kernel's build-id, from its notes; its length, or 0. */
static size_t
ksyms_own_id(uint8_t *id, size_t max)
{
	uint8_t		 buf[4096];
	uint32_t	 nh[3];
	ssize_t		 n;
	size_t		 off = 0, nsz, dsz;
	int		 fd;

	if ((fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	while (n > 0 && off + sizeof(nh) <= (size_t)n) {
		memcpy(nh, buf + off, sizeof(nh));
		nsz = (nh[0] + 3) & ~3U;
		dsz = (nh[1] + 3) & ~3U;
		if (off + sizeof(nh) + nsz + dsz > (size_t)n)
			break;
		if (nh[2] == KSYMS_NT_GNU_BUILD_ID && nh[0] == 4 &&
		    memcmp(buf + off + sizeof(nh), "GNU", 4) == 0) {
			if (nh[1] > max)
				return 0;
			memcpy(id, buf + off + sizeof(nh) + nsz, nh[1]);
			return nh[1];
		}
		off += sizeof(nh) + nsz + dsz;
	}
	return 0;
}

static int
ksyms_cmp(const void *a, const void *b)
{
	const struct ksyms_ent	*x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int
ksyms_push(struct ksyms *k, uint64_t addr, const char *name, size_t len)
{
	void	*tmp;
	size_t	 cap;

	if (k->n == k->cap) {
		cap = k->cap ? k->cap * 2 : 65536;
		if ((tmp = realloc(k->e, cap * sizeof(*k->e))) == NULL)
			return -1;
		k->e = tmp;
		k->cap = cap;
	}
	if (k->alen + len + 1 > k->acap) {
		cap = k->acap ? k->acap * 2 : 1 << 20;
		while (cap < k->alen + len + 1)
			cap *= 2;
		if (cap > UINT32_MAX || (tmp = realloc(k->arena, cap)) == NULL)
			return -1;
		k->arena = tmp;
		k->acap = cap;
	}
	memcpy(k->arena + k->alen, name, len);
	k->arena[k->alen + len] = '\0';
	k->e[k->n].addr = addr;
	k->e[k->n].name = (uint32_t)k->alen;
	k->alen += len + 1;
	k->n++;
	return 0;
}

struct ksyms *
ksyms_load(const uint8_t *build_id, size_t len, char *err, size_t errlen)
{
	struct ksyms		*k = NULL;
	uint8_t			 own[64];
	size_t			 ownlen, cap = 0, nl;
	char			*line = NULL, type, *name, *e;
	unsigned long long	 addr;
	ssize_t			 n;
	FILE			*f = NULL;
	int			 nonzero = 0;

	err[0] = '\0';
	ownlen = ksyms_own_id(own, sizeof(own));
	if (len == 0 || ownlen != len || memcmp(own, build_id, len) != 0) {
		snprintf(err, errlen, "the file's kernel is not this host's "
		    "(build-id)");
		return NULL;
	}
	if ((f = fopen("/proc/kallsyms", "re")) == NULL) {
		snprintf(err, errlen, "/proc/kallsyms: %s", strerror(errno));
		return NULL;
	}
	if ((k = calloc(1, sizeof(*k))) == NULL)
		goto nomem;
	while ((n = getline(&line, &cap, f)) > 0) {
		/* "ffffffff81000000 T _text [module]" */
		addr = strtoull(line, &e, 16);
		if (e == line || *e != ' ' || e[1] == '\0' || e[2] != ' ')
			continue;
		type = e[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = e + 3;
		nl = strcspn(name, " \t\n");
		nonzero |= addr != 0;
		if (ksyms_push(k, addr, name, nl) == -1)
			goto nomem;
	}
	free(line);
	line = NULL;
	fclose(f);
	f = NULL;
	if (!nonzero) {
		snprintf(err, errlen, "/proc/kallsyms shows no addresses "
		    "(kptr_restrict; run as root)");
		ksyms_free(k);
		return NULL;
	}
	qsort(k->e, k->n, sizeof(*k->e), ksyms_cmp);
	return k;
nomem:
	snprintf(err, errlen, "out of memory");
	free(line);
	if (f != NULL)
		fclose(f);
	ksyms_free(k);
	return NULL;
}

void
ksyms_free(struct ksyms *k)
{
	if (k == NULL)
		return;
	free(k->e);
	free(k->arena);
	free(k);
}

const char *
ksyms_lookup(const struct ksyms *k, uint64_t addr)
{
	size_t	 i = addrtab_upto(k->e, k->n, sizeof(*k->e), addr);

	/* the last symbol at or before addr */
	return i == 0 ? NULL : k->arena + k->e[i - 1].name;
}
