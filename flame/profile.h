/*
 * profile: one trace file's samples as the reader (perfread) gives them,
 * every field binary, nothing parsed from text: who ran (pid, tid and
 * the comm the file's COMM records give that thread), when (perf clock
 * ns), where (cpu, cgroup), under which event and with what period, and
 * the callchain as addresses, each placed in the mapping that held it
 * (the file's MMAP/MMAP2 records: file name, build-id, offset) and named
 * by the symbolizer (symbolize.h) when it can be.
 *
 * The reader calls back once per sample; a sample and what it points to
 * live until the callback returns, the mappings and the file's facts
 * until perfread_close. A consumer that keeps anything copies it (fold
 * interns the names into a stackset; pprof output keeps mappings by
 * their id). Nothing here grows with the samples.
 */
#ifndef PERFSPILL_PROFILE_H
#define PERFSPILL_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#define PROFILE_BUILD_ID_MAX	20	/* perf's BUILD_ID_SIZE */
#define PROFILE_NONE		UINT32_MAX
#define PROFILE_MAX_FRAMES	1024	/* deeper: the leaf side is kept */

/* A region of a process's (or the kernel's) address space that a file
 * was mapped into, as a MMAP or MMAP2 record of the file says. */
struct profile_mapping {
	uint32_t	 id;		/* 1, 2, ...: unique within the file */
	uint32_t	 pid;		/* PROFILE_NONE: the kernel's */
	uint64_t	 start, end;	/* [start, end) */
	uint64_t	 pgoff;		/* file offset of start */
	const char	*file;		/* as recorded: a path, "[vdso]",
					 * "[kernel.kallsyms]_text", "//anon" */
	uint8_t		 build_id[PROFILE_BUILD_ID_MAX];
	uint8_t		 build_id_len;	/* 0: not known (MMAP2's or the
					 * file's build-id table's) */
	uint8_t		 kernel;	/* the kernel or a module */
};

/* What a frame's address is, and the name found for it. */
struct profile_frame {
	uint64_t			 addr;	/* as sampled */
	const struct profile_mapping	*map;	/* NULL: none held it */
	uint64_t			 offset; /* in map's file: addr -
						  * start + pgoff */
	const char			*sym;	/* the function; NULL: no
						 * symbol found */
	uint8_t				 kernel;
	uint8_t				 inlined; /* a function inlined at
						  * addr into the next frame's
						  * (perfspill-flame --inline) */
};

struct profile_sample {
	uint64_t		 time;		/* perf clock ns; 0: none */
	uint64_t		 period;	/* 1 without PERIOD */
	uint32_t		 pid, tid;
	uint32_t		 cpu;		/* PROFILE_NONE: not recorded */
	uint32_t		 attr;		/* index of the file's event */
	const char		*event;		/* its name, as perf names it */
	const char		*comm;		/* the thread's at the time;
						 * "" when the file has none */
	uint64_t		 cgroup_id;	/* 0: not recorded */
	const char		*cgroup;	/* its path (CGROUP records);
						 * NULL: not recorded/unknown */
	uint32_t		 nframes;
	const struct profile_frame *frames;	/* leaf first */
};

/* The file's facts, from its header and feature sections. */
struct profile_info {
	char		 host[256];	/* HEADER_HOSTNAME; "" without */
	uint64_t	 first, last;	/* HEADER_SAMPLE_TIME; 0: none */
	int		 cgroups;	/* some event records CGROUP */
	int		 callchains;	/* some event records CALLCHAIN */
	uint32_t	 nattrs;
	const char	*const *events;	/* nattrs names */
	uint8_t		 kernel_build_id[PROFILE_BUILD_ID_MAX];
	uint8_t		 kernel_build_id_len;	/* 0: not in the file */
	uint64_t	 head_hash;	/* of the header, attrs and features:
					 * what a companion is checked by */
};

/* What a walk of the data came to. */
struct profile_stats {
	uint64_t	 read;		/* every sample of the file walked */
	uint64_t	 samples;	/* passed to the callback */
	uint64_t	 first, last;	/* of those, perf clock ns */
	uint64_t	 records;
	uint64_t	 lost;		/* the kernel's LOST counts */
};

#endif
