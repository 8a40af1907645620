/*
 * pb: the protobuf wire format, written by hand, for the profiles
 * perfspill-flame encodes (pprof.c's profile.proto, otlp.c's OTLP
 * request). Each field is a key (field number << 3 | wire type) and a
 * value: a varint (type 0), eight bytes (type 1, fixed64), or a length and
 * bytes (type 2) for a string, an embedded message or a packed run.
 *
 * A buffer that runs out of memory keeps its bytes and says so (failed):
 * an encoder writes on and checks once at the end.
 */
#ifndef PERFSPILL_PB_H
#define PERFSPILL_PB_H

#include <stddef.h>
#include <stdint.h>

#define PB_VARINT	0
#define PB_FIXED64	1
#define PB_LEN		2

struct pb_buf {
	uint8_t		*p;
	size_t		 len, cap;
	int		 failed;	/* out of memory: the rest is not kept */
};

void	pb_put(struct pb_buf *, const void *, size_t);
void	pb_varint(struct pb_buf *, uint64_t);
/* The bytes v takes as a varint: a packed field's length is their sum. */
size_t	pb_varint_len(uint64_t v);
/* A varint field; zero is the default and left out. */
void	pb_uint(struct pb_buf *, unsigned int field, uint64_t);
/* A fixed64 field; zero left out. */
void	pb_fixed64(struct pb_buf *, unsigned int field, uint64_t);
/* A length-delimited field: a string, bytes or a message's bytes. */
void	pb_bytes(struct pb_buf *, unsigned int field, const void *, size_t);
/* A message field: the bytes of sub, then sub emptied for reuse. */
void	pb_message(struct pb_buf *, unsigned int field, struct pb_buf *sub);
/* Packed repeated varints (none: left out), built in scratch. */
void	pb_packed(struct pb_buf *, unsigned int field, const uint64_t *,
	    size_t, struct pb_buf *scratch);

#endif
