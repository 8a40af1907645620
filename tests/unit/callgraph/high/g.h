/* high: a folder above low for test-callgraph.py (see g.c) */
#define FAKE_G_STEP	2

int	fake_g(int);
