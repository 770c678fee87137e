# SPDX-License-Identifier: BSD-3-Clause
"""Turns the code blocks of haloshift's Markdown pages into compilable files.

Usage: extract_snippets.py --out DIR FILE.md...

Every ```cpp block (also c++, cxx) is compiled in DIR:

* a whole program (it defines `int main`) is kept as it is, after the
  declarations of the placeholder functions programs call for the
  application's part (`my_initial_positions()`, ...: PROGRAM_PLACEHOLDERS);
* any other block is a fragment: its `#include` lines and namespace aliases
  move to file scope, the rest becomes the body of a function whose
  parameters are the names the fragment takes from its surroundings (a
  prelude, see PRELUDES: `grid`, the particle arrays, ...). A fragment with
  includes of its own gets only those, so it shows that they suffice, and
  shares a file (includes_<n>.cpp) with the fragments that include exactly
  the same; the others see the whole library (haloshift.hpp and auto.hpp),
  and share SHARED_UNITS files (fragments_<n>.cpp): the library's headers,
  most of a fragment's compile time, are then parsed once per file, not per
  fragment.

`#line` directives make the compiler report errors at the block's line in
the .md file. A block may be preceded (on the line before its fence, blank
lines allowed in between) by an HTML comment that GitHub does not show:

    <!-- snippet: prelude=particles -->    pick a prelude (default: none)
    <!-- snippet: scope=file -->           compile at file scope (declarations
                                           that cannot live in a function,
                                           e.g. a class with static members)
    <!-- snippet: skip reason=... -->      do not compile (or configure, a cmake
                                           block); the reason is listed

```cmake blocks become consumer projects (DIR/cmake_<page>_<n>/CMakeLists.txt:
the block after a project() and an `app` target), configured by the test
docs.cmake_snippets. Shell, JSON, plain and other blocks are not checked.

Writes DIR/snippets.cmake (the lists CMake builds and tests) and
DIR/snippets.txt (what was extracted and skipped); rewrites a file only when
its content changes, and removes files of blocks that no longer exist.
"""
import argparse
import os
import re
import sys

CPP_LANGUAGES = {"cpp", "c++", "cxx"}
CMAKE_LANGUAGES = {"cmake"}

FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)\s*$")
DIRECTIVE = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
MAIN = re.compile(r"\bint\s+main\s*\(")
SHARED_UNITS = 2
HOISTED = re.compile(r"^\s*(#\s*include\b|namespace\s+\w+\s*=\s*[\w:]+\s*;)")

LIBRARY_INCLUDES = ["#include <haloshift/haloshift.hpp>", "#include <haloshift/auto.hpp>"]

# What fragments may use without declaring it: a sink for the application's
# work (`use(...)`, `apply(...)`), and, per prelude, the parameters of the
# function the fragment becomes. Declarations only: the snippets are compiled,
# never linked or run.
COMMON_PLACEHOLDERS = """\
#include <cstdint>
#include <span>
#include <vector>
// The application's own work in doc fragments: takes anything, does nothing
// (defined: it may be called with a fragment's local types).
template <class... Args> void use(Args&&...) {}
template <class... Args> void apply(Args&&...) {}
"""

PRELUDES = {
    # No names from outside besides use() and apply().
    "none": {"parameters": [], "declarations": ""},
    # A grid, as most fragments assume.
    "grid": {"parameters": ["haloshift::cartesian_grid& grid"], "declarations": ""},
    # A grid and this rank's block of doubles (README's block exchange).
    "blocks": {"parameters": ["haloshift::cartesian_grid& grid", "std::vector<double>& mine"], "declarations": ""},
    # Particle codes: the grid, the global box, positions and per-particle forces.
    "particles": {
        "parameters": [
            "haloshift::cartesian_grid& grid",
            "const haloshift::domain& domain",
            "std::vector<haloshift::position>& x",
            "std::vector<double>& fx",
        ],
        "declarations": "",
    },
    # An application loop with block creation (docs/networks.md).
    "networks": {
        "parameters": [
            "int world_size",
            "int rank",
            "int steps",
            "bool created_a_block",
            "const haloshift::offset& where",
        ],
        "declarations": """\
void compute();
bool near_me(const haloshift::offset& where);
void join_local_group(int rank);
std::vector<double> object_volume_changes();
""",
    },
}

# Functions whole programs call for the application's part. Standard types
# only: nothing here may include a haloshift header for the program.
PROGRAM_PLACEHOLDERS = """\
#include <array>
#include <vector>
// The application's part of the doc programs: declared, never defined.
std::vector<std::array<double, 3>> my_initial_positions();
void compute_forces_with_newton(const std::vector<std::array<double, 3>>& x, const std::vector<double>& q,
                                std::vector<std::array<double, 3>>& f);
"""


class Block:
    def __init__(self, page, language, first_line, lines, directive):
        self.page = page
        self.language = language
        self.first_line = first_line  # line number (1-based) of the first line of code
        self.lines = lines
        self.options = parse_directive(directive, page, first_line)


def parse_directive(text, page, line):
    options = {}
    if text is None:
        return options
    # key=value pairs; the skip reason runs to the end of the comment.
    m = re.match(r"^skip(?:\s+reason=(.*))?$", text)
    if m:
        options["skip"] = (m.group(1) or "").strip()
        if not options["skip"]:
            sys.exit("%s:%d: <!-- snippet: skip --> needs reason=..." % (page, line))
        return options
    for item in text.split():
        key, _, value = item.partition("=")
        if key == "prelude" and value in PRELUDES:
            options["prelude"] = value
        elif key == "scope" and value in ("file", "function"):
            options["scope"] = value
        else:
            sys.exit("%s:%d: unknown snippet directive '%s' (prelude=%s, scope=file, skip reason=...)"
                     % (page, line, item, "|".join(PRELUDES)))
    return options


def read_blocks(page):
    with open(page, encoding="utf-8") as f:
        text = f.read().split("\n")
    blocks = []
    i = 0
    last_comment = None  # a snippet directive seen since the last non-blank line
    while i < len(text):
        m = FENCE.match(text[i])
        if not m:
            d = DIRECTIVE.match(text[i])
            if d:
                last_comment = d.group(1)
            elif text[i].strip():
                last_comment = None
            i += 1
            continue
        indent, fence, language = m.group(1), m.group(2), m.group(3).lower()
        start = i + 1
        j = start
        while j < len(text) and not re.match(r"^\s*" + re.escape(fence[0]) + "{%d,}\\s*$" % len(fence), text[j]):
            j += 1
        if j == len(text):
            sys.exit("%s:%d: code block never closed" % (page, i + 1))
        lines = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in text[start:j]]
        blocks.append(Block(page, language, start + 1, lines, last_comment))
        last_comment = None
        i = j + 1
    return blocks


def line_directive(line, page):
    return '#line %d "%s"' % (line, page.replace("\\", "/"))


def groupable(block):
    """A fragment that sees the whole library and lives in a function: several share one file."""
    return (not MAIN.search("\n".join(block.lines)) and block.options.get("scope") != "file"
            and not any("#" in l for l in block.lines if HOISTED.match(l)))


def include_set(block):
    """The includes a fragment names itself (comments and spacing aside), or None: a program, a fragment
    at file scope (its declarations could clash with another's) or one that sees the whole library."""
    if MAIN.search("\n".join(block.lines)) or block.options.get("scope") == "file":
        return None
    own = sorted({include_of(l) for l in block.lines if HOISTED.match(l) and "#" in l})
    # What the fragment shows is which of the library's headers suffice; a standard header one fragment
    # names and another does not (the library's headers include them anyway) does not keep them apart.
    return tuple(i for i in own if "haloshift/" in i) or None


def include_of(line):
    """An include line without its comment and spacing."""
    return re.sub(r"\s*//.*$", "", line).strip()


def fragment(block):
    """A fragment's lines below the file's includes (its own are the caller's): its namespace aliases at
    file scope, then its function."""
    page = block.page
    prelude = PRELUDES[block.options.get("prelude", "none")]
    out = []
    for n, l in enumerate(block.lines):
        if HOISTED.match(l) and "#" not in l:
            out.append(line_directive(block.first_line + n, page))
            out.append(l)
    body = [(n, l) for n, l in enumerate(block.lines) if not HOISTED.match(l)]
    name = "snippet_%s_%d" % (re.sub(r"\W", "_", os.path.splitext(os.path.basename(page))[0]), block.first_line)
    file_scope = block.options.get("scope") == "file"
    if not file_scope:
        out.append("[[maybe_unused]] void %s(%s) {" % (name, ", ".join(
            "[[maybe_unused]] " + p for p in prelude["parameters"])))
    previous = None
    for n, l in body:
        if previous is None or n != previous + 1:
            out.append(line_directive(block.first_line + n, page))
        out.append(l)
        previous = n
    if not file_scope:
        out.append("}")
    return out


def placeholders(preludes):
    """What fragments may use without declaring it, for the given preludes."""
    out = ['#line %d "%s"' % (1, "snippet-prelude"), "namespace hs = haloshift;", COMMON_PLACEHOLDERS]
    out.extend(PRELUDES[p]["declarations"] for p in sorted(set(preludes)))
    return out


def translation_unit(block):
    """The C++ file for one block."""
    page = block.page
    out = ["// Generated by tests/docs/extract_snippets.py from %s:%d; do not edit."
           % (os.path.basename(page), block.first_line)]
    if MAIN.search("\n".join(block.lines)):
        out.append(PROGRAM_PLACEHOLDERS)
        out.append(line_directive(block.first_line, page))
        out.extend(block.lines)
        return "\n".join(out) + "\n"
    own_includes = any("#" in l for l in block.lines if HOISTED.match(l))
    if not own_includes:
        out.extend(LIBRARY_INCLUDES)
    includes = [(n, l) for n, l in enumerate(block.lines) if HOISTED.match(l) and "#" in l]
    for n, l in includes:
        out.append(line_directive(block.first_line + n, page))
        out.append(l)
    out.extend(placeholders([block.options.get("prelude", "none")]))
    out.extend(fragment(block))
    return "\n".join(out) + "\n"


def shared_unit(blocks):
    """One file for several groupable fragments: the library's headers are parsed once for all of them
    (a fragment alone costs 4-9 s of compiler time, most of it those headers)."""
    out = ["// Generated by tests/docs/extract_snippets.py from %s; do not edit."
           % ", ".join("%s:%d" % (os.path.basename(b.page), b.first_line) for b in blocks)]
    out.extend(LIBRARY_INCLUDES)
    out.extend(placeholders([b.options.get("prelude", "none") for b in blocks]))
    for b in blocks:
        out.extend(fragment(b))
    return "\n".join(out) + "\n"


def includes_unit(blocks):
    """One file for fragments that include the same library headers themselves: their includes (each
    once), then the fragments; each still shows that its includes of the library suffice."""
    out = ["// Generated by tests/docs/extract_snippets.py from %s; do not edit."
           % ", ".join("%s:%d" % (os.path.basename(b.page), b.first_line) for b in blocks)]
    seen = set()
    for b in blocks:
        for n, l in enumerate(b.lines):
            if HOISTED.match(l) and "#" in l and include_of(l) not in seen:
                seen.add(include_of(l))
                out.append(line_directive(b.first_line + n, b.page))
                out.append(l)
    out.extend(placeholders([b.options.get("prelude", "none") for b in blocks]))
    for b in blocks:
        out.extend(fragment(b))
    return "\n".join(out) + "\n"


def cmake_project(block, name):
    return "\n".join([
        "# Generated by tests/docs/extract_snippets.py from %s:%d; do not edit."
        % (os.path.basename(block.page), block.first_line),
        "cmake_minimum_required(VERSION 3.21)",
        "project(%s LANGUAGES CXX)" % name,
        'file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/main.cpp "int main() {}\\n")',
        "add_executable(app ${CMAKE_CURRENT_BINARY_DIR}/main.cpp)",
        "# The block:",
    ] + block.lines) + "\n"


def write_if_changed(path, content, written):
    written.add(os.path.abspath(path))
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == content:
                return
    except OSError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(content)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("pages", nargs="+")
    args = parser.parse_args()
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)

    written = set()
    sources, cmake_dirs, report, skipped, shared = [], [], [], [], []
    by_includes = {}  # include set -> the fragments that name exactly it
    counts = {}
    compiled = 0
    for page in args.pages:
        page = os.path.abspath(page)
        stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(page))[0])
        for block in read_blocks(page):
            where = "%s:%d" % (os.path.basename(page), block.first_line)
            if block.language in CPP_LANGUAGES:
                counts[stem] = counts.get(stem, 0) + 1
                if "skip" in block.options:
                    skipped.append("%s: %s" % (where, block.options["skip"]))
                    continue
                kind = "program" if MAIN.search("\n".join(block.lines)) else \
                    "fragment, prelude %s%s" % (block.options.get("prelude", "none"),
                                                 ", file scope" if block.options.get("scope") == "file" else "")
                compiled += 1
                if groupable(block):
                    shared.append(block)
                    report.append((where, None, kind))
                    continue
                if include_set(block):
                    by_includes.setdefault(include_set(block), []).append(block)
                    report.append((where, None, kind))
                    continue
                path = os.path.join(out_dir, "%s_%d.cpp" % (stem, counts[stem]))
                write_if_changed(path, translation_unit(block), written)
                sources.append(path)
                report.append((where, os.path.basename(path), kind))
            elif block.language in CMAKE_LANGUAGES:
                if "skip" in block.options:
                    skipped.append("%s: %s" % (where, block.options["skip"]))
                    continue
                name = "cmake_%s_%d" % (stem, len([d for d in cmake_dirs if ("_" + stem + "_") in d]) + 1)
                write_if_changed(os.path.join(out_dir, name, "CMakeLists.txt"), cmake_project(block, name), written)
                cmake_dirs.append(os.path.join(out_dir, name))
                report.append("%s -> %s/CMakeLists.txt (cmake, configured)" % (where, name))
            else:
                report.append("%s: %s block, not checked" % (where, block.language or "plain"))

    # The groupable fragments in SHARED_UNITS files (two: one per core of a small CI machine), in page order.
    groups = [shared[i::SHARED_UNITS] for i in range(SHARED_UNITS) if shared[i::SHARED_UNITS]]
    unit_of = {}
    for i, group in enumerate(groups):
        path = os.path.join(out_dir, "fragments_%d.cpp" % (i + 1))
        write_if_changed(path, shared_unit(group), written)
        sources.append(path)
        for b in group:
            unit_of["%s:%d" % (os.path.basename(b.page), b.first_line)] = os.path.basename(path)
    for i, group in enumerate(by_includes.values()):
        path = os.path.join(out_dir, "includes_%d.cpp" % (i + 1))
        write_if_changed(path, includes_unit(group), written)
        sources.append(path)
        for b in group:
            unit_of["%s:%d" % (os.path.basename(b.page), b.first_line)] = os.path.basename(path)
    report = [r if isinstance(r, str) else "%s -> %s (%s)" % (r[0], r[1] or unit_of[r[0]], r[2]) for r in report]

    def cmake_list(items):
        return "\n".join('  "%s"' % i.replace("\\", "/") for i in items)

    write_if_changed(os.path.join(out_dir, "snippets.cmake"),
                     "# Generated by tests/docs/extract_snippets.py; do not edit.\n"
                     "set(HALOSHIFT_DOC_SNIPPET_SOURCES\n%s)\n"
                     "set(HALOSHIFT_DOC_SNIPPET_CMAKE_PROJECTS\n%s)\n"
                     "set(HALOSHIFT_DOC_SNIPPETS_SKIPPED %d)\n"
                     % (cmake_list(sources), cmake_list(cmake_dirs), len(skipped)), written)
    write_if_changed(os.path.join(out_dir, "snippets.txt"),
                     "C++ blocks compiled: %d; skipped: %d\n%s\n%s\n"
                     % (compiled, len(skipped),
                        "\n".join("skipped " + s for s in skipped),
                        "\n".join(report)), written)

    # Files of blocks that are gone (a page lost a block, or a block moved).
    for root, _, files in os.walk(out_dir):
        for f in files:
            path = os.path.abspath(os.path.join(root, f))
            if (f.endswith(".cpp") or f == "CMakeLists.txt") and path not in written:
                os.remove(path)
    print("haloshift: doc snippets: %d C++ blocks to compile, %d skipped, %d CMake blocks"
          % (compiled, len(skipped), len(cmake_dirs)))
    for s in skipped:
        print("haloshift: doc snippet skipped, %s" % s)


if __name__ == "__main__":
    main()
