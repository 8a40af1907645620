#!/usr/bin/env python3
"""embed: a text file as a C array of string literals, one per line
(each line its own literal: C11 promises only 4095 characters in one),
ending with NULL. Usage: embed.py NAME INPUT OUTPUT"""
import sys

name, src, dst = sys.argv[1:4]
with open(src, encoding="utf-8") as f:
    lines = f.read().splitlines(True)
out = ["/* made by flame/embed.py from %s: edit that file */\n"
       % src.rsplit("/", 1)[-1],
       "static const char *const %s[] = {\n" % name]
for line in lines:
    if "]]>" in line:
        sys.exit("embed.py: %s holds ']]>', which ends its CDATA" % src)
    esc = (line.replace("\\", "\\\\").replace('"', '\\"')
           .replace("\t", "\\t").replace("\n", "\\n"))
    out.append('\t"%s",\n' % esc)
out.append("\tNULL,\n};\n")
with open(dst, "w", encoding="utf-8") as f:
    f.write("".join(out))
