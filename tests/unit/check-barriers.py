#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every acquire, release and fence in src/ and bench/ names the access it pairs with.

STYLE.md: "every barrier names the barrier it pairs with". A use is an
acquire/release/acq_rel memory order (C11's, or the compiler's __ATOMIC_
ones), a helper with one in its name (load_acquire, store_release,
cas_acq_rel, ...), an RCU publish or read (vml_rcu_assign_pointer,
vml_rcu_dereference), a fence, or a ThreadSanitizer sync annotation. It is paired when the words "pairs with"
appear in a comment on its line, or in the comment just above the
statement it belongs to (the comment lines directly above it, after any
earlier lines of the same statement). Definitions (#define) are not uses.

This is a text check, not an analysis: it cannot tell whether the partner
named is the right one, only that someone wrote one down.

usage: check-barriers.py SOURCE_ROOT   (prints the unpaired uses; exit 1 if any)
"""
import os
import re
import sys

USE = re.compile(
    r"memory_order_(acquire|release|acq_rel)\b|__ATOMIC_(ACQUIRE|RELEASE|ACQ_REL)\b"
    r"|\b(load_acquire|store_release|fetch_\w+?_(acquire|release|acq_rel)"
    r"|cas_(acquire|release|acq_rel)|xchg_acq_rel"
    r"|vml_rcu_assign_pointer|vml_rcu_dereference"
    r"|atomic_thread_fence|atomic_signal_fence"
    r"|__tsan_acquire|__tsan_release|tsan_acquire|tsan_release)\s*\(")
PAIRED = re.compile(r"pairs with", re.I)

# The library and the command's layers (src/), and the benchmarks (bench/).
DIRS = ("src", "bench")


def split_comments(lines):
    """For each line: (code without comments, comment text, is_comment_only)."""
    out = []
    in_block = False
    for line in lines:
        code, comment, i = "", "", 0
        had_comment = in_block
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    comment += line[i:]
                    i = len(line)
                else:
                    comment += line[i:end]
                    i = end + 2
                    in_block = False
            elif line.startswith("/*", i):
                in_block = had_comment = True
                i += 2
            elif line.startswith("//", i):
                comment += line[i + 2:]
                had_comment = True
                i = len(line)
            elif line[i] == '"':
                j = i + 1
                while j < len(line) and line[j] != '"':
                    j += 2 if line[j] == "\\" else 1
                code += line[i:j + 1]
                i = j + 1
            else:
                code += line[i]
                i += 1
        out.append((code, comment, not code.strip() and had_comment))
    return out


def paired(parsed, n):
    code, comment, _ = parsed[n]
    if PAIRED.search(comment):
        return True
    k = n - 1
    # Earlier lines of the same statement (they do not end one).
    while k >= 0:
        c, com, only = parsed[k]
        s = c.strip()
        if only or not s or s.startswith("#") or s.endswith((";", "{", "}")):
            break
        if PAIRED.search(com):
            return True
        k -= 1
    # The comment lines directly above it.
    while k >= 0 and parsed[k][2]:
        if PAIRED.search(parsed[k][1]):
            return True
        k -= 1
    return False


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = checked = 0
    walks = [os.walk(os.path.join(root, top)) for top in DIRS]
    for d, _, files in sorted(w for walk in walks for w in walk):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            with open(path, encoding="utf-8") as fh:
                parsed = split_comments(fh.read().split("\n"))
            in_define = False
            for n, (code, _, _) in enumerate(parsed):
                define = in_define or code.lstrip().startswith("#")
                in_define = define and code.rstrip().endswith("\\")
                if define or not USE.search(code):
                    continue
                checked += 1
                if not paired(parsed, n):
                    bad += 1
                    print(f"{os.path.relpath(path, root)}:{n + 1}: no partner named: {code.strip()}")
    print(f"# {checked} acquire/release/fence uses, {bad} without a partner named")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
