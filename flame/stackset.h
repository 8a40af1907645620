/*
 * stackset: the distinct stacks of a profile and their sample counts.
 * Every string (frame, comm, event, cgroup, host) is stored once and
 * named by a small id; a stack is its keys and frame ids, root first.
 * Memory grows with the distinct strings and stacks, never with samples:
 * a sample whose stack is known adds to that stack's count.
 */
#ifndef PERFSPILL_STACKSET_H
#define PERFSPILL_STACKSET_H

#include <stddef.h>
#include <stdint.h>

#define STACKSET_NONE	UINT32_MAX	/* no string, or out of memory */
#define STACKSET_MAX_FRAMES	1024

/* What a string names: a frame of user or kernel code, or a label that
 * roots stacks (a command, process, cgroup, host). */
enum stack_kind {
	STACK_USER,
	STACK_KERNEL,
	STACK_LABEL,
};

/* What a stack is counted under, beside its frames. */
struct stack_key {
	uint32_t	 host;		/* string ids */
	uint32_t	 event;
	uint32_t	 comm;
	uint32_t	 cgroup;	/* STACKSET_NONE: not recorded */
	uint32_t	 pid;		/* a number */
};

struct stack {
	uint64_t	 count;
	uint32_t	 hash;
	uint32_t	 nframes;
	struct stack_key key;
	uint32_t	 frames[];	/* string ids, root first */
};

struct stackset;

struct stackset	*stackset_create(void);
void		 stackset_free(struct stackset *);

/* The id of s[0..len) of that kind (a kernel and a user frame of one
 * name are two strings); STACKSET_NONE without memory. */
uint32_t	 stackset_intern(struct stackset *, const char *, size_t,
		    enum stack_kind);
const char	*stackset_str(const struct stackset *, uint32_t);
enum stack_kind	 stackset_kind(const struct stackset *, uint32_t);
size_t		 stackset_nstr(const struct stackset *);

/* Adds count to the stack (key, frames[0..n), root first), with each run
 * of one frame without a symbol made one frame (stackset_squeeze); 0, or
 * -1 without memory. */
int		 stackset_add(struct stackset *, const struct stack_key *,
		    const uint32_t *, uint32_t, uint64_t);
size_t		 stackset_nstacks(const struct stackset *);
const struct stack *stackset_stack(const struct stackset *, size_t);
uint64_t	 stackset_samples(const struct stackset *);

/* Adds every stack of src to dst; 0, or -1 without memory. */
int		 stackset_merge(struct stackset *, const struct stackset *);

#endif
