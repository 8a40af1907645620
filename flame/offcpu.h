/*
 * offcpu: off-CPU time from a file's sched:sched_switch samples. Each
 * switch sample is taken in the task that leaves the CPU, with its stack;
 * its raw data names the task that comes on (next_pid). A task's
 * switch-out waits, per thread id, until a later switch (on any CPU)
 * names it as next_pid: then it is passed on as one sample whose period
 * is the time between the two, in nanoseconds, at its switch-out time.
 *
 * As perf's --off-cpu (util/bpf_skel/off_cpu.bpf.c) does, only a task
 * that goes to sleep counts (prev_state S, D or I): one preempted while
 * runnable is waiting for a CPU, not off it by its own doing. The idle
 * tasks (pid 0) never count. A switch-out whose switch-in lies in a
 * later file, or after the recording, is not counted (offcpu_end says
 * how many).
 *
 * The field offsets come from the sched_switch format the file carries
 * (its tracing data feature, as perf reads it); a file without one is
 * not read. Memory grows with the threads that switched, never with the
 * switches.
 */
#ifndef PERFSPILL_OFFCPU_H
#define PERFSPILL_OFFCPU_H

#include <stddef.h>
#include <stdint.h>

#include "perfread.h"
#include "profile.h"

#define OFFCPU_EVENT	"sched:sched_switch"

struct offcpu_stats {
	uint64_t	 switches;	/* sched_switch samples seen */
	uint64_t	 paired;	/* switch-outs passed on, timed */
	uint64_t	 open;		/* still off the CPU at the end */
};

struct offcpu;

/* The pairing of the file pi describes, passing the timed switch-outs in
 * o's range and of o's pids to fn; NULL with a message in err (the file
 * carries no sched_switch format; out of memory). */
struct offcpu	*offcpu_create(const struct profile_info *pi,
		    const struct perfread_opts *o, perfread_fn fn, void *arg,
		    char *err, size_t errlen);
/* A perfread_fn: every sample of the file, unfiltered, in time order. */
int		 offcpu_sample(void *offcpu, const struct profile_sample *);
void		 offcpu_end(const struct offcpu *, struct offcpu_stats *);
/* Why offcpu_sample stopped the walk (a switch whose raw data does not
 * hold a field where the file's format puts it), or NULL. */
const char	*offcpu_error(const struct offcpu *);
void		 offcpu_free(struct offcpu *);

/* The offsets and sizes of prev_pid, prev_state and next_pid in the
 * sched_switch format among len bytes of a tracing data feature (perf's
 * layout); 0, or -1 when it holds none. offcpu_create refuses a format
 * that lacks one of them or gives it a size it cannot have. Exposed for
 * the unit test. */
struct offcpu_fields {
	uint32_t	 prev_pid, prev_pid_size;
	uint32_t	 prev_state, prev_state_size;
	uint32_t	 next_pid, next_pid_size;
};
int		 offcpu_format(const uint8_t *p, uint64_t len,
		    struct offcpu_fields *);

#endif
