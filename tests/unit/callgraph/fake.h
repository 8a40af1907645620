/*
 * fake: a made-up library for test-callgraph.py. a.c, b.c and c.c call
 * each other in a circle; d.c calls e.c, and a function that only the
 * program main.c defines, as a library must not.
 */
#ifndef PERFSPILL_FAKE_H
#define PERFSPILL_FAKE_H

int	fake_a(int);
int	fake_b(int);
int	fake_c(int);
int	fake_d(int);
int	fake_e(int);
int	fake_main_only(void);

#endif
