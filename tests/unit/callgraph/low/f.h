/* low: a folder below high for test-callgraph.py (see f.c) */
int	fake_f(int);
