# SPDX-License-Identifier: BSD-3-Clause
"""Doxygen input filter for the Markdown pages (Doxyfile.in: FILTER_PATTERNS).

The pages are written for GitHub, which gives every heading an anchor (its
text, lower case, spaces as dashes). Doxygen 1.9 does not, so a link such as
[reading](#8-ranks-the-target-is-met) would not resolve. This filter appends
that anchor as an explicit Doxygen header id, `## Heading {#anchor}`, to every
heading a link of the same page points at (prefixed with `section-` where the
anchor does not start with a letter, as Doxygen requires, and the links with
it). It changes nothing else and keeps
the line numbers, so Doxygen's warnings still point at the right line of the
.md file. Usage: doxygen_md_filter.py <file.md> (writes the result to stdout).
"""
import re
import sys

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
LOCAL_LINK = re.compile(r"\]\(#([^)\s]+)\)")


def github_anchor(text):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"`([^`]*)`", r"\1", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def doxygen_label(anchor):
    """A label Doxygen accepts ({#...} must start with a letter): `8-ranks` becomes `section-8-ranks`."""
    return anchor if anchor[:1].isalpha() else "section-" + anchor


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        lines = f.read().split("\n")
    targets = set()
    fenced = False
    for line in lines:
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            targets.update(LOCAL_LINK.findall(line))
    out = []
    fenced = False
    for line in lines:
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and "{#" not in line:
            m = HEADING.match(line)
            if m and github_anchor(m.group(2)) in targets:
                line = "%s %s {#%s}" % (m.group(1), m.group(2), doxygen_label(github_anchor(m.group(2))))
        if not fenced:
            line = LOCAL_LINK.sub(lambda l: "](#%s)" % doxygen_label(l.group(1)) if l.group(1) in targets else l.group(0), line)
        out.append(line)
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
