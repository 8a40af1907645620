/*
 * buildid: the build-id of an ELF file and the perf.data record that
 * names it (see buildid.h). The daemon's table of the files its tasks map
 * (daemon/record/buildid.c) reads each file with it; the preamble reads
 * the kernel's notes with it.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "perfdata/buildid.h"
#include "perfdata/perf-abi.h"

/* a note run or section larger than this is not a build-id's */
#define BUILDID_NOTES_MAX	65536
#define BUILDID_HEADERS_MAX	4096

static int	buildid_table(int, int, int, uint64_t, unsigned, unsigned,
		    uint8_t *, size_t *);
static int	buildid_note_at(int, uint64_t, uint64_t, uint64_t,
		    uint8_t *, size_t *);

/* ELF */

int
buildid_notes(const uint8_t *notes, size_t size, size_t align, uint8_t *id,
    size_t *len)
{
	Elf64_Nhdr	nh;		/* same layout as Elf32_Nhdr */
	size_t		off = 0, desc;

	while (off + sizeof nh <= size) {
		memcpy(&nh, notes + off, sizeof nh);
		if (nh.n_namesz > size)
			break;
		desc = off + (sizeof nh + nh.n_namesz + align - 1) / align *
		    align;
		if (desc > size || nh.n_descsz > size - desc)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(notes + off + sizeof nh, "GNU", 4) == 0) {
			if (nh.n_descsz == 0 || nh.n_descsz > BUILDID_MAX)
				return -1;
			memcpy(id, notes + desc, nh.n_descsz);
			*len = nh.n_descsz;
			return 0;
		}
		off = (desc + nh.n_descsz + align - 1) / align * align;
	}
	return -1;
}

int
buildid_elf(int fd, uint8_t *id, size_t *len)
{
	union {
		unsigned char	ident[EI_NIDENT];
		Elf32_Ehdr	e32;
		Elf64_Ehdr	e64;
	}	 eh;
	int	 is64, one = 1;

	memset(&eh, 0, sizeof eh);
	if (pread(fd, &eh, sizeof eh, 0) < (ssize_t)sizeof eh.e32)
		return -1;
	if (memcmp(eh.ident, ELFMAG, SELFMAG) != 0)
		return -1;
	/* only our own byte order: that is all a task here can map */
	if (eh.ident[EI_DATA] != (*(char *)&one ? ELFDATA2LSB : ELFDATA2MSB))
		return -1;
	if (eh.ident[EI_CLASS] != ELFCLASS64 &&
	    eh.ident[EI_CLASS] != ELFCLASS32)
		return -1;
	is64 = eh.ident[EI_CLASS] == ELFCLASS64;
	/* the loader's view first: a stripped file may have no sections */
	if (is64 ? buildid_table(fd, 1, 0, eh.e64.e_phoff, eh.e64.e_phnum,
	    eh.e64.e_phentsize, id, len) == 0 : buildid_table(fd, 0, 0,
	    eh.e32.e_phoff, eh.e32.e_phnum, eh.e32.e_phentsize, id, len) == 0)
		return 0;
	return is64 ? buildid_table(fd, 1, 1, eh.e64.e_shoff, eh.e64.e_shnum,
	    eh.e64.e_shentsize, id, len) : buildid_table(fd, 0, 1,
	    eh.e32.e_shoff, eh.e32.e_shnum, eh.e32.e_shentsize, id, len);
}

/*
 * The notes behind the program headers (PT_NOTE) or the section headers
 * (SHT_NOTE) of a table of num entries at off.
 */
static int
buildid_table(int fd, int is64, int sections, uint64_t off, unsigned num,
    unsigned entsize, uint8_t *id, size_t *len)
{
	union {
		Elf32_Phdr	p32;
		Elf64_Phdr	p64;
		Elf32_Shdr	s32;
		Elf64_Shdr	s64;
	}		 h;
	size_t		 want;
	uint64_t	 noff, size, align;
	unsigned	 i, type;

	want = sections ? (is64 ? sizeof h.s64 : sizeof h.s32) :
	    (is64 ? sizeof h.p64 : sizeof h.p32);
	if (off == 0 || entsize < want)
		return -1;
	for (i = 0; i < num && i < BUILDID_HEADERS_MAX; i++) {
		if (pread(fd, &h, want, (off_t)(off + (uint64_t)i * entsize)) !=
		    (ssize_t)want)
			return -1;
		if (sections && is64) {
			type = h.s64.sh_type == SHT_NOTE;
			noff = h.s64.sh_offset;
			size = h.s64.sh_size;
			align = h.s64.sh_addralign;
		} else if (sections) {
			type = h.s32.sh_type == SHT_NOTE;
			noff = h.s32.sh_offset;
			size = h.s32.sh_size;
			align = h.s32.sh_addralign;
		} else if (is64) {
			type = h.p64.p_type == PT_NOTE;
			noff = h.p64.p_offset;
			size = h.p64.p_filesz;
			align = h.p64.p_align;
		} else {
			type = h.p32.p_type == PT_NOTE;
			noff = h.p32.p_offset;
			size = h.p32.p_filesz;
			align = h.p32.p_align;
		}
		if (type && buildid_note_at(fd, noff, size, align, id,
		    len) == 0)
			return 0;
	}
	return -1;
}

static int
buildid_note_at(int fd, uint64_t off, uint64_t size, uint64_t align,
    uint8_t *id, size_t *len)
{
	uint8_t	*notes;
	int	 rc = -1;

	if (size == 0 || size > BUILDID_NOTES_MAX || off > INT64_MAX)
		return -1;
	if ((notes = malloc(size)) == NULL)
		return -1;
	if (pread(fd, notes, size, (off_t)off) == (ssize_t)size)
		rc = buildid_notes(notes, size, align == 8 ? 8 : 4, id, len);
	free(notes);
	return rc;
}

int
buildid_record(struct sbuf *out, int32_t pid, uint16_t misc,
    const uint8_t *id, size_t len, const char *name)
{
	struct perf_event_header	 h;
	size_t				 n = strlen(name) + 1;
	uint8_t				*p;

	n = (n + PERFDATA_NAME_ALIGN - 1) / PERFDATA_NAME_ALIGN *
	    PERFDATA_NAME_ALIGN;
	if (len > BUILDID_MAX)
		len = BUILDID_MAX;
	h.type = PERF_RECORD_HEADER_BUILD_ID;
	h.misc = misc | PERF_RECORD_MISC_BUILD_ID_SIZE;
	/* perf-abi.h's layout; then to 8 bytes, as every record of our
	 * files (salvage relies on it) */
	h.size = (uint16_t)((sizeof(struct perf_record_header_build_id) + n +
	    7) / 8 * 8);
	if ((p = sbuf_zero(out, h.size)) == NULL)
		return -1;
	memcpy(p, &h, sizeof h);
	memcpy(p + offsetof(struct perf_record_header_build_id, pid), &pid, 4);
	memcpy(p + offsetof(struct perf_record_header_build_id, build_id), id,
	    len);
	p[offsetof(struct perf_record_header_build_id, size)] = (uint8_t)len;
	memcpy(p + offsetof(struct perf_record_header_build_id, filename), name,
	    strlen(name));
	return 0;
}
