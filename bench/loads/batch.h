/*
 * batch: what the loads share. A load is a fixed batch of work whose
 * wall time it prints in seconds on stdout, so that the benchmark sees
 * how much a recorder slowed it down.
 */
#ifndef BENCH_BATCH_H
#define BENCH_BATCH_H

/* CLOCK_MONOTONIC, in seconds */
double	batch_now(void);

/*
 * The threaded loads' main: "NAME THREADS COUNT [SECONDS]" on the command
 * line, THREADS threads each run worker((void *)(uintptr_t)(i + 1)) where
 * i is the thread's index, COUNT (in batch_count) is the worker's share of
 * the batch, SECONDS (in batch_seconds, 0 without it) the time a worker
 * that paces itself spreads its share over (batch_due); prints the wall
 * time from the first thread's start to the last one's end. Returns
 * main's exit code.
 */
extern long	batch_count;
extern double	batch_seconds;
/*
 * A paced worker's clock: spins until the time its i-th unit of work is
 * due (batch_seconds spread evenly over batch_count units from start);
 * returns at once without SECONDS or when the worker is behind.
 */
void	batch_due(double start, long i);
int	batch_threads(int argc, char **argv, const char *name,
	    void *(*worker)(void *));

#endif
