/*
 * fake-aio: the aio_error and aio_return of the unit tests' fake AIO
 * layers (test-cblock-reap, test-record-pool), which define aio_write
 * and aio_suspend each their own way. A test binary that includes this
 * defines them itself; the linker resolves libdaemon's calls here before
 * it looks at the C library. State is kept where glibc keeps it, in the
 * aiocb's __error_code and __return_value.
 */
#ifndef PERFSPILL_FAKE_AIO_H
#define PERFSPILL_FAKE_AIO_H

#include <aio.h>

int
aio_error(const struct aiocb *cb)
{
	return cb->__error_code;
}

ssize_t
aio_return(struct aiocb *cb)
{
	return cb->__return_value;
}

#endif
