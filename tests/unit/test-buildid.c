/*
 * test-buildid: the ELF note reader on small ELF files made here (64 and
 * 32 bit, notes found through program headers or only through section
 * headers, malformed ones), this very binary against readelf, the
 * HEADER_BUILD_ID layout, and the collector end to end: MMAP2 records in
 * a ring that wraps, read by the worker thread, flushed per file.
 */
#include <sys/stat.h>

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "buildid.h"
#include "check.h"

static const uint8_t	want_id[20] = {
	0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
	14, 15, 16 };
/* the id the ELF files made here carry */
static const uint8_t	*elf_id = want_id;

/* A note: header, name padded to 4, desc padded to 4. */
static size_t
put_note(uint8_t *p, uint32_t type, const char *name, const uint8_t *desc,
    uint32_t descsz)
{
	Elf64_Nhdr	nh;
	size_t		off;

	nh.n_namesz = (uint32_t)strlen(name) + 1;
	nh.n_descsz = descsz;
	nh.n_type = type;
	memcpy(p, &nh, sizeof nh);
	off = sizeof nh;
	memset(p + off, 0, (nh.n_namesz + 3) / 4 * 4);
	memcpy(p + off, name, nh.n_namesz);
	off += (nh.n_namesz + 3) / 4 * 4;
	memset(p + off, 0, (descsz + 3) / 4 * 4);
	memcpy(p + off, desc, descsz);
	return off + (descsz + 3) / 4 * 4;
}

/* Two notes, the build-id second, as linkers lay them out. */
static size_t
notes(uint8_t *p, uint32_t idsz)
{
	static const uint8_t	abi[16] = { 0 };
	size_t			n;

	n = put_note(p, NT_GNU_ABI_TAG, "GNU", abi, sizeof abi);
	return n + put_note(p + n, NT_GNU_BUILD_ID, "GNU", elf_id, idsz);
}

static void
test_notes(void)
{
	uint8_t	 buf[256], id[BUILDID_MAX];
	size_t	 n, len = 0;

	n = notes(buf, 20);
	CHECK_EQ(buildid_notes(buf, n, 4, id, &len), 0);
	CHECK_EQ(len, 20);
	CHECK(memcmp(id, want_id, 20) == 0);
	/* md5-sized ids too */
	n = notes(buf, 16);
	CHECK_EQ(buildid_notes(buf, n, 4, id, &len), 0);
	CHECK_EQ(len, 16);
	/* none, empty, longer than an MMAP2 holds, cut short, another owner */
	n = put_note(buf, NT_GNU_ABI_TAG, "GNU", want_id, 16);
	CHECK_EQ(buildid_notes(buf, n, 4, id, &len), -1);
	n = notes(buf, 0);
	CHECK_EQ(buildid_notes(buf, n, 4, id, &len), -1);
	n = put_note(buf, NT_GNU_BUILD_ID, "GNU", (const uint8_t[24]){ 1 },
	    24);
	CHECK_EQ(buildid_notes(buf, n, 4, id, &len), -1);
	n = notes(buf, 20);
	CHECK_EQ(buildid_notes(buf, n - 4, 4, id, &len), -1);
	n = put_note(buf, NT_GNU_BUILD_ID, "GNX", want_id, 20);
	CHECK_EQ(buildid_notes(buf, n, 4, id, &len), -1);
	/* a name size that would run past the end */
	n = notes(buf, 20);
	memcpy(buf, &(uint32_t){ 0xfffffff0 }, 4);
	CHECK_EQ(buildid_notes(buf, n, 4, id, &len), -1);
}

static char	tmpdir[] = "/tmp/test-buildid.XXXXXX";

/* Create tmpdir/name: the ELF header, a header table after it, the
 * notes at noff. An open fd, or -1. */
static int
put_elf(const char *name, const void *eh, size_t ehl, const void *tab,
    size_t tabl, const void *nb, size_t nl, off_t noff)
{
	char	 path[PATH_MAX];
	int	 fd;

	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) == -1)
		return -1;
	if (pwrite(fd, eh, ehl, 0) != (ssize_t)ehl ||
	    pwrite(fd, tab, tabl, (off_t)ehl) != (ssize_t)tabl ||
	    pwrite(fd, nb, nl, noff) != (ssize_t)nl) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Write an ELF64 file: the notes behind a PT_NOTE program header, or,
 * with sections, behind an SHT_NOTE section header only. */
static int
elf64(const char *name, int sections, uint32_t idsz)
{
	Elf64_Ehdr	 eh;
	Elf64_Phdr	 ph;
	Elf64_Shdr	 sh[2];
	uint8_t		 nb[256];
	size_t		 n = notes(nb, idsz);

	memset(&eh, 0, sizeof eh);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_ehsize = sizeof eh;
	if (sections) {
		eh.e_shoff = sizeof eh;
		eh.e_shnum = 2;
		eh.e_shentsize = sizeof sh[0];
	} else {
		eh.e_phoff = sizeof eh;
		eh.e_phnum = 1;
		eh.e_phentsize = sizeof ph;
	}
	memset(&ph, 0, sizeof ph);
	ph.p_type = PT_NOTE;
	ph.p_offset = 512;
	ph.p_filesz = n;
	ph.p_align = 4;
	memset(sh, 0, sizeof sh);
	sh[1].sh_type = SHT_NOTE;
	sh[1].sh_offset = 512;
	sh[1].sh_size = n;
	sh[1].sh_addralign = 4;
	return sections ? put_elf(name, &eh, sizeof eh, sh, sizeof sh, nb, n,
	    512) : put_elf(name, &eh, sizeof eh, &ph, sizeof ph, nb, n, 512);
}

static int
elf32(const char *name)
{
	Elf32_Ehdr	 eh;
	Elf32_Phdr	 ph;
	uint8_t		 nb[256];
	size_t		 n = notes(nb, 20);

	memset(&eh, 0, sizeof eh);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_phoff = sizeof eh;
	eh.e_phnum = 1;
	eh.e_phentsize = sizeof ph;
	memset(&ph, 0, sizeof ph);
	ph.p_type = PT_NOTE;
	ph.p_offset = 256;
	ph.p_filesz = (uint32_t)n;
	return put_elf(name, &eh, sizeof eh, &ph, sizeof ph, nb, n, 256);
}

static void
test_elf(void)
{
	uint8_t	 id[BUILDID_MAX];
	size_t	 len = 0;
	int	 fd;

	CHECK((fd = elf64("phdr", 0, 20)) != -1);
	CHECK_EQ(buildid_elf(fd, id, &len), 0);
	CHECK_EQ(len, 20);
	CHECK(memcmp(id, want_id, 20) == 0);
	close(fd);

	/* no program headers: the sections are read */
	CHECK((fd = elf64("shdr", 1, 16)) != -1);
	len = 0;
	CHECK_EQ(buildid_elf(fd, id, &len), 0);
	CHECK_EQ(len, 16);
	CHECK(memcmp(id, want_id, 16) == 0);
	close(fd);

	CHECK((fd = elf32("elf32")) != -1);
	CHECK_EQ(buildid_elf(fd, id, &len), 0);
	CHECK_EQ(len, 20);
	close(fd);

	/* an empty build-id note is none */
	CHECK((fd = elf64("empty", 0, 0)) != -1);
	CHECK_EQ(buildid_elf(fd, id, &len), -1);
	/* cut inside the notes, then inside the headers */
	CHECK(ftruncate(fd, 520) == 0);
	CHECK_EQ(buildid_elf(fd, id, &len), -1);
	CHECK(ftruncate(fd, 20) == 0);
	CHECK_EQ(buildid_elf(fd, id, &len), -1);
	close(fd);

	/* not ELF at all */
	CHECK((fd = open("/proc/self/status", O_RDONLY)) != -1);
	CHECK_EQ(buildid_elf(fd, id, &len), -1);
	close(fd);
}

/* This binary against binutils, an independent reader. */
static void
test_self_vs_readelf(void)
{
	uint8_t	 id[BUILDID_MAX];
	char	 line[512], hex[2 * BUILDID_MAX + 1], *p;
	size_t	 len = 0, i;
	FILE	*f;
	int	 fd;

	hex[0] = '\0';
	snprintf(line, sizeof line, "readelf -n /proc/%d/exe 2>/dev/null",
	    (int)getpid());
	if ((f = popen(line, "r")) == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL)
		if ((p = strstr(line, "Build ID: ")) != NULL)
			sscanf(p + strlen("Build ID: "), "%40s", hex);
	pclose(f);
	if (hex[0] == '\0') {
		printf("no readelf or no build-id note: skipped\n");
		return;
	}
	CHECK((fd = open("/proc/self/exe", O_RDONLY)) != -1);
	CHECK_EQ(buildid_elf(fd, id, &len), 0);
	close(fd);
	CHECK_EQ(len * 2, strlen(hex));
	for (i = 0; i < len; i++)
		snprintf(line + 2 * i, 3, "%02x", id[i]);
	CHECK_STR(line, hex);
}

static void
test_record(void)
{
	struct sbuf			 sb;
	struct perf_event_header	 h;
	int32_t				 pid;

	sbuf_init(&sb);
	CHECK_EQ(buildid_record(&sb, -1, PERF_RECORD_MISC_USER, want_id, 20,
	    "/usr/lib/libc.so.6"), 0);
	/* header, pid, 24 bytes of id and size, the name padded to 64,
	 * the whole to 8 */
	CHECK_EQ(sb.len, 8 + 4 + 24 + 64 + 4);
	memcpy(&h, sb.data, sizeof h);
	CHECK_EQ(h.type, 67);
	CHECK_EQ(h.size, sb.len);
	CHECK_EQ(h.misc, PERF_RECORD_MISC_USER | (1 << 15));
	memcpy(&pid, sb.data + 8, 4);
	CHECK_EQ(pid, -1);
	CHECK(memcmp(sb.data + 12, want_id, 20) == 0);
	CHECK_EQ(sb.data[32], 20);
	CHECK_STR((char *)sb.data + 36, "/usr/lib/libc.so.6");
	sbuf_finish(&sb);
}

#define RING	1024

/* Put an MMAP2 of path by pid at start..end at ring position pos;
 * returns its size. */
static size_t
put_mmap2_at(uint8_t *ring, uint64_t pos, uint16_t misc, const char *path,
    const struct stat *st, uint32_t pid, uint64_t start, uint64_t end)
{
	uint8_t				 rec[512];
	struct perf_event_header	 h;
	uint64_t			 ino = st->st_ino, len = end - start;
	size_t				 n = 72 + (strlen(path) + 8) / 8 * 8, i;

	memset(rec, 0, sizeof rec);
	h.type = PERF_RECORD_MMAP2;
	h.misc = misc;
	h.size = (uint16_t)n;
	memcpy(rec, &h, sizeof h);
	memcpy(rec + 8, &pid, 4);
	memcpy(rec + 12, &pid, 4);
	memcpy(rec + 16, &start, 8);
	memcpy(rec + 24, &len, 8);
	/* maj 254 where a build-id size would be: perf's abort */
	memcpy(rec + 40, &(uint32_t){ 254 }, 4);
	memcpy(rec + 48, &ino, 8);
	strcpy((char *)rec + 72, path);
	for (i = 0; i < n; i++)
		ring[(pos + i) % RING] = rec[i];
	return n;
}

static size_t
put_mmap2(uint8_t *ring, uint64_t pos, uint16_t misc, const char *path,
    const struct stat *st)
{
	return put_mmap2_at(ring, pos, misc, path, st, (uint32_t)getpid(),
	    0x1000, 0x3000);
}

/* Where this binary's text is mapped, from /proc/self/maps. */
static int
exe_text(const char *exe, uint64_t *start, uint64_t *end)
{
	char	 line[PATH_MAX + 128];
	FILE	*f;
	int	 rc = -1;

	if ((f = fopen("/proc/self/maps", "r")) == NULL)
		return -1;
	while (rc == -1 && fgets(line, sizeof line, f) != NULL)
		if (strstr(line, " r-xp ") != NULL && strstr(line, exe) &&
		    sscanf(line, "%" SCNx64 "-%" SCNx64, start, end) == 2)
			rc = 0;
	fclose(f);
	return rc;
}

/* A file first seen through a task that is gone and a name we cannot
 * see is read again through the next task that maps it. */
static void
test_retry(void)
{
	struct buildid	*b;
	struct sbuf	 sb;
	struct stat	 st;
	uint8_t		 ring[RING];
	char		 exe[PATH_MAX], hidden[PATH_MAX + 64];
	uint64_t	 tail = 0, head = 0, start, end;

	CHECK(realpath("/proc/self/exe", exe) != NULL);
	CHECK(stat(exe, &st) == 0);
	CHECK_EQ(exe_text(exe, &start, &end), 0);
	/* the name as another mount namespace would give it */
	snprintf(hidden, sizeof hidden, "%s/no-such-root%s", tmpdir, exe);
	CHECK((b = buildid_create()) != NULL);
	sbuf_init(&sb);
	head += put_mmap2_at(ring, head, PERF_RECORD_MISC_USER, hidden, &st,
	    0x7fffffff, start, end);
	buildid_note_ring(b, ring, RING, tail, head, 0);
	CHECK_EQ(buildid_flush(b, &sb, 10000), 0);
	CHECK_EQ(sb.len, 0);
	tail = head;
	head += put_mmap2_at(ring, head, PERF_RECORD_MISC_USER, hidden, &st,
	    (uint32_t)getpid(), start, end);
	buildid_note_ring(b, ring, RING, tail, head, 0);
	CHECK_EQ(buildid_flush(b, &sb, 10000), 0);
	CHECK(sb.len > 0);
	if (sb.len > 36)
		CHECK_STR((char *)sb.data + 36, hidden);
	sbuf_finish(&sb);
	buildid_destroy(b);
}

static void
test_collect(void)
{
	struct buildid			*b;
	struct sbuf			 sb;
	struct stat			 st;
	struct perf_event_header	 h = { PERF_RECORD_SAMPLE, 0, 40 };
	uint8_t				 ring[RING], copy[RING];
	uint8_t				 id[BUILDID_MAX];
	char				 exe[PATH_MAX];
	uint64_t			 tail = 5 * RING - 100, head = tail;
	uint16_t			 misc;
	size_t				 len = 0, i;
	int				 fd;

	CHECK(realpath("/proc/self/exe", exe) != NULL);
	CHECK(stat(exe, &st) == 0);
	CHECK((fd = open(exe, O_RDONLY)) != -1);
	CHECK_EQ(buildid_elf(fd, id, &len), 0);
	close(fd);

	memset(ring, 0, sizeof ring);
	/* a sample, then an MMAP2 that wraps, flagged as another
	 * recorder's attr.build_id leaves it */
	memcpy(ring + head % RING, &h, sizeof h);
	head += h.size;
	head += put_mmap2(ring, head, PERF_RECORD_MISC_USER |
	    PERF_RECORD_MISC_MMAP_BUILD_ID, exe, &st);
	CHECK((b = buildid_create()) != NULL);
	sbuf_init(&sb);
	/* the ring is read-only: the flag is cleared in the drained copy */
	CHECK_EQ(buildid_note_ring(b, ring, RING, tail, head, 0), 1);
	memcpy(&misc, ring + (tail + 40 + 4) % RING, 2);
	CHECK_EQ(misc, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	for (i = 0; i < head - tail; i++)
		copy[i] = ring[(tail + i) % RING];
	buildid_repair(copy, (size_t)(head - tail), 0);
	memcpy(&misc, copy + 40 + 4, 2);
	CHECK_EQ(misc, PERF_RECORD_MISC_USER);
	/* noted twice in one file: listed once */
	CHECK_EQ(buildid_note_ring(b, ring, RING, tail, head, 0), 1);
	CHECK_EQ(buildid_flush(b, &sb, 10000), 0);
	CHECK_EQ(sb.len, (8 + 4 + 24 + (strlen(exe) + 64) / 64 * 64 + 7) /
	    8 * 8);
	if (sb.len > 36) {
		CHECK(memcmp(sb.data + 12, id, len) == 0);
		CHECK_EQ(sb.data[32], len);
		CHECK_STR((char *)sb.data + 36, exe);
	}
	/* the next file saw nothing */
	sb.len = 0;
	CHECK_EQ(buildid_flush(b, &sb, 0), 0);
	CHECK_EQ(sb.len, 0);
	/* and the one after sees it again, from the cache: no wait */
	buildid_note_ring(b, ring, RING, tail, head, 0);
	CHECK_EQ(buildid_flush(b, &sb, 0), 0);
	CHECK(sb.len > 0);

	/* with attr.build_id ours, a size the kernel cannot give is bogus */
	sb.len = 0;
	tail = head;
	head += put_mmap2(ring, head, PERF_RECORD_MISC_USER |
	    PERF_RECORD_MISC_MMAP_BUILD_ID, "/nonexistent", &st);
	CHECK_EQ(buildid_note_ring(b, ring, RING, tail, head, 1), 1);
	for (i = 0; i < head - tail; i++)
		copy[i] = ring[(tail + i) % RING];
	buildid_repair(copy, (size_t)(head - tail), 1);
	memcpy(&misc, copy + 4, 2);
	CHECK_EQ(misc, PERF_RECORD_MISC_USER);
	CHECK_EQ(buildid_flush(b, &sb, 10000), 0);
	CHECK_EQ(sb.len, 0);		/* no such file: no id */
	/* a plausible size stays: the kernel gave it, and it is listed */
	tail = head;
	head += put_mmap2(ring, head, PERF_RECORD_MISC_USER |
	    PERF_RECORD_MISC_MMAP_BUILD_ID, "/nonexistent", &st);
	ring[(tail + 40) % RING] = 20;
	CHECK_EQ(buildid_note_ring(b, ring, RING, tail, head, 0), 1);
	CHECK_EQ(buildid_flush(b, &sb, 10000), 0);
	CHECK_EQ(sb.len, 0);
	CHECK_EQ(buildid_note_ring(b, ring, RING, tail, head, 1), 0);
	CHECK_EQ(buildid_flush(b, &sb, 0), 0);
	CHECK_EQ(sb.len, 8 + 4 + 24 + 64 + 4);
	if (sb.len > 32)
		CHECK_EQ(sb.data[32], 20);

	sbuf_finish(&sb);
	buildid_destroy(b);
	buildid_destroy(NULL);
}

/* A preamble's MMAP2 with a build-id, as synth-proc writes it. */
static size_t
put_preamble_mmap2(uint8_t *buf, const char *name, uint8_t idsz, int flag)
{
	struct perf_event_header	 h;
	size_t				 n = 72 + (strlen(name) + 8) / 8 * 8;

	memset(buf, 0, n + 32);
	h.type = PERF_RECORD_MMAP2;
	h.misc = PERF_RECORD_MISC_USER |
	    (flag ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0);
	h.size = (uint16_t)(n + 32);		/* with a trailer */
	memcpy(buf, &h, sizeof h);
	buf[40] = idsz;
	memcpy(buf + 44, want_id, idsz > 20 ? 20 : idsz);
	strcpy((char *)buf + 72, name);
	return h.size;
}

static void
test_preamble(void)
{
	struct sbuf	 sb;
	uint8_t		 buf[4096];
	size_t		 n = 0;

	n += put_preamble_mmap2(buf + n, "/usr/lib/libc.so.6", 20, 1);
	n += put_preamble_mmap2(buf + n, "/usr/bin/zsh", 20, 1);
	n += put_preamble_mmap2(buf + n, "/usr/lib/libc.so.6", 20, 1);
	n += put_preamble_mmap2(buf + n, "/usr/lib/libc.so.6", 16, 1);
	n += put_preamble_mmap2(buf + n, "/usr/bin/noid", 20, 0);
	n += put_preamble_mmap2(buf + n, "/usr/bin/bad", 21, 1);
	sbuf_init(&sb);
	CHECK_EQ(buildid_preamble(&sb, buf, n), 0);
	/* one per name and id, in name order */
	CHECK_EQ(sb.len, 3 * (8 + 4 + 24 + 64 + 4));
	if (sb.len == 3 * 104) {
		CHECK_STR((char *)sb.data + 36, "/usr/bin/zsh");
		CHECK_STR((char *)sb.data + 104 + 36, "/usr/lib/libc.so.6");
		CHECK_EQ(sb.data[104 + 32], 16);
		CHECK_EQ(sb.data[208 + 32], 20);
	}
	sbuf_finish(&sb);
}

/* Until the worker has looked at every file noted so far: hurried, as a
 * rotation does. Not kicked as a drain pass does: a pass wakes it only
 * for a batch (BUILDID_BATCH files, or the first waiting 5 s), so after
 * one note it slept on unless still awake from the last look, a race
 * the test lost when run beside other tests. */
static void
settle(struct buildid *b)
{
	uint64_t	 files, cleared, reading;
	int		 i;

	buildid_hurry(b);
	for (i = 0; i < 10000; i++) {
		buildid_stats(b, &files, &cleared, &reading);
		if (reading == 0)
			return;
		usleep(1000);
	}
	CHECK(!"the worker never finished");
}

/* The ids that HEADER_BUILD_ID records of sb carry, as first bytes. */
static size_t
listed(const struct sbuf *sb, uint8_t *first, size_t max)
{
	struct perf_event_header	 h;
	size_t				 off, n = 0;

	for (off = 0; off + sizeof h <= sb->len; off += h.size) {
		memcpy(&h, sb->data + off, sizeof h);
		if (h.size < sizeof h)
			break;
		if (n < max)
			first[n] = sb->data[off + 12];
		n++;
	}
	return n;
}

/* One more MMAP2 of path at ring position *head, noted. */
static void
map_again(struct buildid *b, uint8_t *ring, uint64_t *head, const char *path,
    const struct stat *st)
{
	uint64_t	 tail = *head;

	*head += put_mmap2(ring, tail, PERF_RECORD_MISC_USER, path, st);
	buildid_note_ring(b, ring, RING, tail, *head, 0);
}

/* Overwrite the first byte of the build-id of an elf64() file in place:
 * the same inode and size, new times. */
static void
rewrite_id(const char *path, uint8_t first)
{
	int	 fd;

	CHECK((fd = open(path, O_WRONLY)) != -1);
	/* the notes at 512: the ABI tag's 32 bytes, the id's header */
	CHECK(pwrite(fd, &first, 1, 512 + 32 + 16) == 1);
	close(fd);
}

/* Finish a file: how many ids it lists, the first byte of each. */
static size_t
flush_ids(struct buildid *b, struct sbuf *sb, uint8_t *first, size_t max)
{
	sb->len = 0;
	CHECK_EQ(buildid_flush(b, sb, 10000), 0);
	return listed(sb, first, max);
}

/*
 * A file rewritten in place (same device and inode, same size: only its
 * times tell) between two trace files, and within one: each names the
 * ids its mappings found, the newest last.
 */
static void
test_rewrite(void)
{
	struct buildid	*b;
	struct sbuf	 sb;
	struct stat	 st;
	uint8_t		 ring[RING], id[20], first[4];
	char		 path[PATH_MAX];
	uint64_t	 head = 0;
	int		 fd;

	memcpy(id, want_id, 20);
	id[0] = 0xa0;
	snprintf(path, sizeof path, "%s/rewritten", tmpdir);
	elf_id = id;
	CHECK((fd = elf64("rewritten", 0, 20)) != -1);
	close(fd);
	elf_id = want_id;
	CHECK(stat(path, &st) == 0);
	/* old enough that its times alone tell a rewrite, as for a binary
	 * installed long ago (BUILDID_RACY_NS) */
	sleep(3);
	CHECK((b = buildid_create()) != NULL);
	sbuf_init(&sb);

	map_again(b, ring, &head, path, &st);
	CHECK_EQ(flush_ids(b, &sb, first, 4), 1);
	CHECK_EQ(first[0], 0xa0);

	/* between two files */
	rewrite_id(path, 0xb0);
	map_again(b, ring, &head, path, &st);
	CHECK_EQ(flush_ids(b, &sb, first, 4), 1);
	CHECK_EQ(first[0], 0xb0);

	/* within one: mapped, rewritten, mapped again */
	map_again(b, ring, &head, path, &st);
	settle(b);
	rewrite_id(path, 0xc0);
	map_again(b, ring, &head, path, &st);
	CHECK_EQ(flush_ids(b, &sb, first, 4), 2);
	CHECK_EQ(first[0], 0xb0);
	CHECK_EQ(first[1], 0xc0);

	/* and the next file, mapping it once more, names the new one only */
	map_again(b, ring, &head, path, &st);
	CHECK_EQ(flush_ids(b, &sb, first, 4), 1);
	CHECK_EQ(first[0], 0xc0);

	sbuf_finish(&sb);
	buildid_destroy(b);
}

int
main(void)
{
	char	 cmd[64];

	test_notes();
	test_record();
	test_preamble();
	test_self_vs_readelf();
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_elf();
	test_collect();
	test_retry();
	test_rewrite();
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		printf("cannot remove %s\n", tmpdir);
	return check_exit();
}
