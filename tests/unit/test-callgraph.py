#!/usr/bin/env python3
"""test-callgraph: scripts/callgraph on made-up libraries (callgraph/):
it must fail on a circle of three files and name them with the symbols
that close it, pass a library whose calls go one way, and fail when that
library needs a function only a program defines. With an order of
folders (--folders), on a library of two folders where low includes a
header of high and high calls low: it must fail on the upward include
and on the upward call each order makes, pass once the arrow is a known
exception, and fail on an exception that is no upward arrow. With high
declaring its public headers (public): pass when low includes one of
them, fail when it includes another.

usage: test-callgraph.py CALLGRAPH CIRCLE.a LINE.a PROGRAM FOLDERS.a BUILD
    SOURCE
"""
import os
import subprocess
import sys
import tempfile

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
    if len(argv) != 7:
        print(__doc__)
        return 2
    tool, circle, line, prog, folders, build, source = argv

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

    low, high = "tests/unit/callgraph/low", "tests/unit/callgraph/high"
    f_c, g_c = low + "/f.c", high + "/g.c"
    with tempfile.TemporaryDirectory() as tmp:
        def order(text):
            path = os.path.join(tmp, "folders")
            with open(path, "w") as f:
                f.write(text)
            return run(tool, "--folders", path, "--build", build, "--root",
                       source, folders)

        rc, out = order("order %s < %s\n" % (low, high))
        check(rc == 1 and "%s includes %s/g.h" % (f_c, high) in out,
              "an include of a folder above fails, naming both files", out)
        check("calls fake_f" not in out, "a call down passes", out)

        rc, out = order("order %s < %s\n" % (high, low))
        check(rc == 1 and "%s calls fake_f in %s" % (g_c, "%s/f.c" % low)
              in out, "a call of a folder above fails, naming the "
              "symbol", out)
        check("includes" not in out, "an include down passes", out)

        rc, out = order("order %s < %s\nexcept a test\n\t%s -> %s/g.h\n"
                        % (low, high, f_c, high))
        check(rc == 0 and "1 known exceptions" in out,
              "a known exception passes", out)

        rc, out = order("order %s < %s\nexcept a test\n\t%s -> %s/g.h\n"
                        "\t%s -> %s/f.c\n" % (low, high, f_c, high, g_c,
                                              low))
        check(rc == 1 and "no upward arrow now" in out and g_c in out,
              "an exception that is no upward arrow fails", out)

        # low may include high (high < low; high's call of low a known
        # exception); high declares its public headers
        calls = "except a test\n\t%s -> %s/f.c\n" % (g_c, low)
        rc, out = order("order %s < %s\npublic %s g.h\n%s" % (
            high, low, high, calls))
        check(rc == 0 and "public headers of %s (%s/g.h)" % (high, high)
              in out, "an include of a public header passes", out)
        rc, out = order("order %s < %s\npublic %s h.h\n%s" % (
            high, low, high, calls))
        check(rc == 1 and "%s includes %s/g.h: it is %s's own header"
              % (f_c, high, high) in out,
              "an include of a folder's own header fails, naming both "
              "files", out)

    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
