# busyloop.py SECONDS: a Python loop busy for SECONDS, then its pid on
# stdout; Debian's /usr/bin/python3 running it has no frame pointers
# (test_unwind.py, bench/dwarf/report.py).
import os
import sys
import time

t = time.time()


def f(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


while time.time() - t < float(sys.argv[1]):
    f(10000)
print(os.getpid())
