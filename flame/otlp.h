/*
 * otlp: profiles as an OpenTelemetry OTLP ExportProfilesServiceRequest
 * (opentelemetry-proto's collector/profiles/v1development, the commit
 * docs/flame.md names: the signal is alpha and its field numbers move),
 * what an OpenTelemetry Collector takes on /v1development/profiles.
 * Encoded by hand with pb.c, as pprof.c is (docs/flame.md says why).
 *
 * The request holds one ResourceProfiles per resource (a host) and one
 * Profile per event of it, and the dictionary they all share: strings,
 * mappings, locations, functions, stacks and attributes, each interned as
 * it comes (index 0 is each table's zero value, "none"). A sample is
 * known by its profile, stack and attributes; each one added appends a
 * value and a timestamp to it. Memory grows with what is distinct, and by
 * 20 bytes a sample for its value and time (the format keeps each).
 */
#ifndef PERFSPILL_OTLP_H
#define PERFSPILL_OTLP_H

#include <stddef.h>
#include <stdint.h>

#define OTLP_MAX_ATTRS	8

/* An attribute: a string value, or an integer (str NULL). */
struct otlp_attr {
	const char	*key;
	const char	*str;
	int64_t		 num;
};

/* A region of an address space mapped from a file. */
struct otlp_map {
	uint64_t	 start, limit;	/* [start, limit) */
	uint64_t	 offset;	/* file offset of start */
	const char	*file;
	const char	*build_id;	/* hex; NULL or "": unknown */
};

/* What a profile's values are. */
struct otlp_type {
	const char	*type, *unit;	/* "cpu", "nanoseconds" */
	const char	*period_type, *period_unit; /* NULL: none */
	int64_t		 period;
};

struct otlp;

struct otlp	*otlp_create(const char *scope, const char *version);
void		 otlp_free(struct otlp *);
/* The resource known by key (a host name): made with attrs the first
 * time; its index, or -1 without memory. */
int64_t		 otlp_resource(struct otlp *, const char *key,
		    const struct otlp_attr *, size_t nattrs);
/* The profile of resource known by name (an event, kept as its
 * attribute perf.event), of type t the first time (its strings must live
 * as long as ot: static ones); its index, or -1. */
int64_t		 otlp_profile(struct otlp *, uint32_t resource,
		    const char *name, const struct otlp_type *t);
/* The dictionary's indices (0: out of memory, or none): */
uint32_t	 otlp_mapping(struct otlp *, const struct otlp_map *);
uint32_t	 otlp_attribute(struct otlp *, const struct otlp_attr *);
/* The location at addr in mapping, a line for each of names[0..n) (the
 * innermost first: functions inlined there, then the one they are
 * inlined into), a frame of the kernel's when kernel is set; a location
 * is known by its mapping and address, the names of its first adding
 * stay. */
uint32_t	 otlp_location(struct otlp *, uint32_t mapping, uint64_t addr,
		    const char *const *names, size_t n, int kernel);
/* The location at addr in mapping if there is one yet, or 0: a caller
 * that names frames at some cost asks first. */
uint32_t	 otlp_location_find(const struct otlp *, uint32_t mapping,
		    uint64_t addr);
/* The stack of locs[0..n), the leaf first. */
uint32_t	 otlp_stack(struct otlp *, const uint64_t *locs, size_t n);
/* Adds a sample of value at ts (wall ns) with the stack and attributes
 * (indices) to profile; 0, or -1 without memory. */
int		 otlp_sample(struct otlp *, uint32_t profile, uint32_t stack,
		    const uint32_t *attrs, size_t nattrs, int64_t value,
		    uint64_t ts);
/* How many samples were added (not distinct ones). */
uint64_t	 otlp_samples(const struct otlp *);
/* The request's protobuf bytes, malloc'd into *out; 0, or -1 without
 * memory. */
int		 otlp_encode(struct otlp *, uint8_t **out, size_t *len);

#endif
