#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No include runs up a layer.

The layers are the list vml_layers in src/meson.build, lowest first: the
core (util .. khugepaged, libvmalock), the tool layers, bench/ and cli/. A
file of src/LAYER/, bench/ or include/vmalock/ may include headers of its
own layer and of the layers before it in that list, never of one after it.
tests/ stands above them all and is not checked.

Where an `#include "..."` points:
  - "LAYER/x.h": that layer (src/LAYER/x.h, or the header meson generates
    there, such as spaces/target-config.h);
  - "vmalock/x.h": a public header belongs to the layer that implements it
    (PUBLIC below), so that util/ cannot include vmalock/mm.h;
  - "x.h": the includer's own folder if it is there, else the folders the
    vmalock command adds to the include path (bench/, src/cli/).
An include that can be placed nowhere is an error too.

A text check: it reads `#include "..."` lines, preprocessor conditions and
all, and nothing else (<...> includes are the system's).

usage: check-layers.py SOURCE_ROOT   (prints each include that runs up, as
       FILE:LINE: LAYER includes HEADER of LAYER; exit 1 if any)
"""
import os
import re
import sys

# include/vmalock/'s headers, by the layer whose functions they declare.
PUBLIC = {
    "vmalock/mm.h": "mm",
    "vmalock/proc.h": "proc",
    "vmalock/khugepaged.h": "khugepaged",
    "vmalock/vmalock.h": "khugepaged",	# all three
}

# Folders searched for an include without a folder, after the includer's
# own: the vmalock command's extra include_directories (meson.build).
SEARCH = ["bench", "src/cli"]

# Includes that run up on purpose, as (includer, header): reason. None yet.
EXEMPT = {
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
LAYERS = re.compile(r"^vml_layers\s*=\s*\[(.*?)\]", re.S | re.M)


def read_layers(root):
    text = open(os.path.join(root, "src", "meson.build")).read()
    m = LAYERS.search(text)
    if not m:
        sys.exit("check-layers: no vml_layers = [...] in src/meson.build")
    body = re.sub(r"#.*", "", m.group(1))
    return re.findall(r"'([a-z_]+)'", body)


def layer_of_file(rel, rank):
    """The layer of a file relative to the root (src/mm/x.c, bench/x.c), or None."""
    if rel.startswith("include/"):
        return PUBLIC.get(rel[len("include/"):])
    return layer_of_dir(os.path.dirname(rel), rank)


def layer_of_dir(rel_dir, rank):
    """The layer of a folder relative to the root (src/mm, bench), or None."""
    parts = rel_dir.split("/")
    if parts[0] == "src" and len(parts) > 1 and parts[1] in rank:
        return parts[1]
    if parts[0] in rank:
        return parts[0]
    return None


def place(root, includer_dir, header, rank):
    """The layer an include of @header from @includer_dir (relative) reaches."""
    if header in PUBLIC:
        return PUBLIC[header]
    if "/" in header:
        first = header.split("/")[0]
        return first if first in rank else None
    for d in [includer_dir] + SEARCH:
        if os.path.exists(os.path.join(root, d, header)):
            return layer_of_dir(d, rank)
    return None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    layers = read_layers(root)
    rank = {name: i for i, name in enumerate(layers)}
    bad = []
    scanned = 0
    for top in ("include", "src", "bench"):
        for dirpath, _, names in sorted(os.walk(os.path.join(root, top))):
            rel_dir = os.path.relpath(dirpath, root)
            for name in sorted(names):
                if not name.endswith((".c", ".h", ".h.in")):
                    continue
                rel = os.path.join(rel_dir, name)
                own = layer_of_file(rel, rank)
                if own is None:
                    bad.append(f"{rel}: in no layer (a folder missing from vml_layers in "
                               "src/meson.build, or a public header from PUBLIC)")
                    continue
                scanned += 1
                with open(os.path.join(root, rel), encoding="utf-8") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        header = m.group(1)
                        to = place(root, rel_dir, header, rank)
                        if to is None:
                            bad.append(f"{rel}:{n}: {own} includes \"{header}\", "
                                       "which is in no layer")
                        elif rank[to] > rank[own] and (rel, header) not in EXEMPT:
                            bad.append(f"{rel}:{n}: {own} includes \"{header}\" of {to}, "
                                       "a layer above it")
    for b in bad:
        print(b)
    print(f"check-layers: {scanned} files, {len(bad)} problems; layers, lowest first: "
          + " < ".join(layers))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
