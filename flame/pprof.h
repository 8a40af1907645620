/*
 * pprof: a profile as pprof's profile.proto (github.com/google/pprof,
 * proto/profile.proto), gzipped, the form go tool pprof, Pyroscope,
 * Parca, speedscope and OpenTelemetry's profiles read. Encoded by hand:
 * the message has five kinds of field, and a table of strings and ids
 * kept while samples are added lets it be written straight from them,
 * without a tree of generated structs (docs/flame.md says more).
 *
 * Everything is interned as it comes: strings, mappings (by a key of the
 * caller's), functions (by name), locations (by mapping and address) and
 * samples (by their locations and labels, whose values add up). Memory
 * grows with what is distinct, never with the samples.
 */
#ifndef PERFSPILL_PPROF_H
#define PERFSPILL_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PPROF_MAX_LABELS	8

/* The profile's facts. */
struct pprof_info {
	int64_t		 time_nanos;	/* wall ns of its start; 0: unknown */
	int64_t		 duration_nanos;
	int64_t		 period;	/* ns between samples; 0: unknown */
	const char	*comment;	/* NULL: none */
	const char	*time_type;	/* the ns value's type: NULL "cpu",
					 * "off_cpu"; a static string */
};

/* A region of an address space mapped from a file. */
struct pprof_map {
	uint64_t	 start, limit;	/* [start, limit) */
	uint64_t	 offset;	/* file offset of start */
	const char	*file;
	const char	*build_id;	/* hex; NULL or "": unknown */
};

/* A label of a sample: a string value, or a number (str NULL). */
struct pprof_label {
	const char	*key;
	const char	*str;
	int64_t		 num;
};

struct pprof;

struct pprof	*pprof_create(const struct pprof_info *);
void		 pprof_free(struct pprof *);
/* The facts once they are known (after the samples); the comment stays
 * pprof_create's. */
void		 pprof_set_info(struct pprof *, const struct pprof_info *);
/* The mapping the caller knows by key (made from m the first time);
 * its id, or 0 without memory. */
uint64_t	 pprof_mapping(struct pprof *, uint64_t key,
		    const struct pprof_map *m);
/* The location at addr in mapping (0: none), its functions innermost
 * first (several: the first ones were inlined into the last; none: not
 * named); its id, or 0 without memory. A location is known by its mapping
 * and address: the names of its first adding stay. */
uint64_t	 pprof_location(struct pprof *, uint64_t mapping, uint64_t addr,
		    const char *const *names, size_t nnames);
/* The location at addr in mapping if there is one yet, or 0: a caller
 * that names frames at some cost asks first. */
uint64_t	 pprof_location_find(const struct pprof *, uint64_t mapping,
		    uint64_t addr);
/* Adds count samples of nanos ns with locations locs[0..n) (the leaf
 * first) and labels; 0, or -1 without memory. */
int		 pprof_sample(struct pprof *, const uint64_t *locs, size_t n,
		    int64_t count, int64_t nanos, const struct pprof_label *,
		    size_t nlabels);
/* How many samples were added (counts, not distinct ones). */
uint64_t	 pprof_samples(const struct pprof *);
/* The profile, gzipped, to f; 0, or -1 with errno. */
int		 pprof_write(struct pprof *, FILE *f);
/* The profile's protobuf bytes (no gzip), malloc'd into *out; 0, or -1
 * without memory. */
int		 pprof_encode(struct pprof *, uint8_t **out, size_t *len);

#endif
