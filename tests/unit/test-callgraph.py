#!/usr/bin/env python3
"""test-callgraph: scripts/callgraph on made-up libraries (callgraph/):
it must fail on a circle of three files and name them with the symbols
that close it, pass a library whose calls go one way, and fail when that
library needs a function only a program defines.

usage: test-callgraph.py CALLGRAPH CIRCLE.a LINE.a PROGRAM
"""
import subprocess
import sys

failed = 0


def check(cond, what, out):
    global failed
    if not cond:
        failed += 1
        print("FAIL: %s\n%s" % (what, out))
    else:
        print("ok: " + what)


def run(*args):
    p = subprocess.run([sys.executable] + list(args), capture_output=True,
                       text=True)
    return p.returncode, p.stdout + p.stderr


def main(argv):
    if len(argv) != 4:
        print(__doc__)
        return 2
    tool, circle, line, prog = argv

    rc, out = run(tool, circle)
    check(rc == 1, "a circle fails", out)
    check("call each other in a circle" in out and all(
        "callgraph/%s.c" % f in out for f in "abc"),
        "the circle is named by its files", out)
    check("fake_a" in out and "fake_b" in out and "fake_c" in out,
          "and by the symbols that close it", out)

    rc, out = run(tool, line)
    check(rc == 0 and "no circle" in out, "calls one way pass", out)

    rc, out = run(tool, "--exe", prog, line)
    check(rc == 1 and "fake_main_only" in out and "callgraph/d.c" in out,
          "a library needing a program's symbol fails, naming both", out)

    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
