#!/usr/bin/env python3
"""Checks the names the documentation's prose gives in backticks: every `Type.member` (or
`Type.member.member`, `Type.method(label:)`) whose type is one of Tern's public types must name a
member that type has, with those argument labels when the text gives them. Code blocks are not
read (they are compiled by DocSamplesTests); DocC's own ``Type/member`` links are checked by DocC.

A property leads on to its type's members (`ClientConfiguration.transportSettings.tls`); argument
labels may leave out defaulted ones, in order. The graphs are Linux's, so members declared only on
Apple platforms are listed in APPLE_ONLY.

Usage: check_doc_names.py GRAPHS_DIR FILE...  (GRAPHS_DIR: the symbol graphs scripts/docs.sh
extracts, one folder per module). Prints each unknown name with its file and line; exits 1 if any.
"""
import glob
import json
import os
import re
import sys

NAME = re.compile(r"`([A-Z][A-Za-z0-9]*(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\([^`()]*\))?)+)`")
COMPONENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\(([^()]*)\))?")
LABELS = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*:)+$")
# Public members compiled only on Apple platforms (behind `#if canImport(...)`).
APPLE_ONLY = {"RequestLogger.osLog"}


def load_members(graphs):
    """Maps each public path (a tuple of names, without argument lists) to its members' full
    titles by base name, and each property's path to the name of its type."""
    members, types = {}, {}
    for path in glob.glob(os.path.join(graphs, "*", "*.symbols.json")):
        with open(path, encoding="utf-8") as file:
            graph = json.load(file)
        for symbol in graph["symbols"]:
            components = symbol["pathComponents"]
            parent = tuple(c.split("(")[0] for c in components[:-1])
            last = components[-1]
            members.setdefault(parent, {}).setdefault(last.split("(")[0], set()).add(last)
            if symbol["kind"]["identifier"] in ("swift.property", "swift.type.property"):
                fragments = symbol.get("declarationFragments", [])
                after_colon = False
                for fragment in fragments:
                    if fragment["kind"] == "text" and ":" in fragment["spelling"]:
                        after_colon = True
                    elif after_colon and fragment["kind"] == "typeIdentifier":
                        types[parent + (last,)] = fragment["spelling"]
                        break
    return members, types


def split_top_level(name):
    """`A.b(.c).d` as ["A", "b(.c)", "d"]: dots inside parentheses stay."""
    parts, depth, current = [], 0, ""
    for character in name:
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
        if character == "." and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += character
    return parts + [current]


def is_subsequence(wanted, labels):
    remaining = iter(labels)
    return all(label in remaining for label in wanted)


def prose_lines(text):
    """(line number, line) of the text outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def problem(name, members, types):
    """Why `name` names nothing, or None when it names a member (or is not Tern's)."""
    parts = split_top_level(name)
    if parts[0] not in members.get((), {}) or any(name.startswith(prefix) for prefix in APPLE_ONLY):
        return None  # not one of Tern's types (Foundation's, the standard library's), or Apple's only
    path = (parts[0],)
    for part in parts[1:]:
        match = COMPONENT.fullmatch(part) or re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\((.*)\)", part)
        if not match:
            return f"`{part}` is not a member name"
        base, arguments = match.group(1), match.group(2)
        titles = members.get(path, {}).get(base)
        if titles is None:
            return f"{'.'.join(path)} has no member `{base}`"
        if arguments is not None and LABELS.match(arguments.replace(" ", "")):
            wanted = arguments.replace(" ", "").split(":")[:-1]
            if not any(is_subsequence(wanted, title[len(base) + 1 : -1].split(":")[:-1]) for title in titles if "(" in title):
                return f"{'.'.join(path)}.{base} takes ({', '.join(sorted(titles))}), not {base}({arguments})"
        title = next(iter(titles))
        property_type = types.get(path + (title,))
        path = (property_type,) if property_type and (property_type,) in members else path + (base,)
    return None


def main():
    graphs, files = sys.argv[1], sys.argv[2:]
    members, types = load_members(graphs)
    if not members.get(()):
        print(f"no symbol graphs in {graphs}", file=sys.stderr)
        return 1
    failures = 0
    checked = 0
    for path in files:
        with open(path, encoding="utf-8") as file:
            text = file.read()
        for number, line in prose_lines(text):
            for name in NAME.findall(line):
                checked += 1
                why = problem(name, members, types)
                if why:
                    failures += 1
                    print(f"{path}:{number}: `{name}`: {why}", file=sys.stderr)
    print(f"== doc names: {checked} backticked Type.member names checked, {failures} unknown", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
