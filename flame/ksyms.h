/*
 * ksyms: the running kernel's symbols, from /proc/kallsyms (modules'
 * included), for a trace file recorded on this kernel: its build-id is
 * compared with /sys/kernel/notes' first. Without read access to the
 * addresses (kptr_restrict, not root) nothing is named.
 */
#ifndef PERFSPILL_KSYMS_H
#define PERFSPILL_KSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* NULL (and why in err) when the file's kernel is not this one or its
 * symbols cannot be read. */
struct ksyms	*ksyms_load(const uint8_t *build_id, size_t len, char *err,
		    size_t errlen);
void		 ksyms_free(struct ksyms *);
/* The function holding addr, or NULL. */
const char	*ksyms_lookup(const struct ksyms *, uint64_t addr);

#endif
