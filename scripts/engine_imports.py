#!/usr/bin/env python3
"""The import graph among the files of src/engine/ and its strongly connected components.

An edge A -> B means A's non-test code names `super::B::...`, `crate::engine::B::...`,
or an item that src/engine/mod.rs re-exports from B (`super::Stream` is catalog.rs's
`Stream`). Items defined in mod.rs itself (`Engine`, `Outcome`, `Notice`, `Limits`) are
edges to the node `mod`, which is the facade and is given no outgoing edges: the
components are those of the files below it.

Usage: python3 scripts/engine_imports.py [--edges] [--catalog]
  --edges    also print every edge
  --catalog  also count the pub(crate) fields of `Catalog` and the files that reach
             `catalog.<field>` from outside catalog.rs
Prints the components with more than one file, largest first, and the largest functions.
"""

import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "engine")


def strip(text):
    """The file without its `#[cfg(test)] mod tests` block and without `//` comments."""
    m = re.search(r"^#\[cfg\(test\)\]\s*\nmod tests", text, re.M)
    if m:
        text = text[: m.start()]
    return re.sub(r"//[^\n]*", "", text)


def group_names(s, i):
    """The first identifier of each entry of the `{...}` group starting at s[i] == '{'."""
    depth, j, start, names = 0, i, i + 1, []
    while j < len(s):
        c = s[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                names.append(s[start:j])
                break
        elif c == "," and depth == 1:
            names.append(s[start:j])
            start = j + 1
        j += 1
    out = []
    for n in names:
        m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)", n)
        if m:
            out.append(m.group(1))
    return out


def referenced(text):
    """Names directly below the engine module that `text` refers to."""
    names = set()
    for m in re.finditer(r"(?<![A-Za-z0-9_:])(?:super|crate::engine)::", text):
        rest = text[m.end():]
        if rest.startswith("super::"):
            continue  # super::super:: leaves the engine module
        if rest.startswith("{"):
            names.update(group_names(text, m.end()))
        else:
            n = re.match(r"[A-Za-z_][A-Za-z0-9_]*", rest)
            if n:
                names.add(n.group(0))
    names.discard("self")
    return names


def reexports(mod_text, modules):
    """Item name -> module, for mod.rs's `pub use m::{A, B}` lines."""
    out = {}
    for m in re.finditer(r"^pub(?:\(crate\))? use ([a-z_]+)::(\{[^}]*\}|[A-Za-z_]+);", mod_text, re.M):
        module, items = m.group(1), m.group(2)
        if module not in modules:
            continue
        for item in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", items):
            out[item] = module
    return out


def graph():
    files = sorted(f[:-3] for f in os.listdir(ROOT) if f.endswith(".rs"))
    modules = set(files) - {"mod"}
    mod_text = open(os.path.join(ROOT, "mod.rs")).read()
    items = reexports(mod_text, modules)
    edges = {m: set() for m in modules}
    for m in modules:
        text = strip(open(os.path.join(ROOT, m + ".rs")).read())
        for n in referenced(text):
            target = n if n in modules else items.get(n, "mod")
            if target != m:
                edges[m].add(target)
    edges["mod"] = set()
    return edges


def sccs(edges):
    """Tarjan's algorithm, iteratively."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def catalog_fields():
    """pub(crate) fields of `struct Catalog`, and outside files that reach them."""
    text = open(os.path.join(ROOT, "catalog.rs")).read()
    m = re.search(r"pub\(crate\) struct Catalog \{(.*?)\n\}", text, re.S)
    body = m.group(1) if m else ""
    fields = re.findall(r"^\s*pub(?:\(crate\))? ([a-z_]+):", body, re.M)
    uses, files = 0, set()
    src = os.path.join(ROOT, "..")
    for dirpath, _, names in os.walk(src):
        for f in names:
            path = os.path.join(dirpath, f)
            if not f.endswith(".rs") or os.path.samefile(path, os.path.join(ROOT, "catalog.rs")):
                continue
            t = strip(open(path).read())
            n = len(re.findall(r"\bcatalog\s*\.(?:%s)\b(?!\s*\()" % "|".join(fields), t)) if fields else 0
            if n:
                uses += n
                files.add(os.path.relpath(path, src))
    return fields, uses, sorted(files)


def largest_functions(n=10):
    """The n longest `fn` bodies in src/engine/, by lines (brace matching on stripped text)."""
    found = []
    for f in sorted(os.listdir(ROOT)):
        if not f.endswith(".rs"):
            continue
        lines = strip(open(os.path.join(ROOT, f)).read()).split("\n")
        for i, line in enumerate(lines):
            m = re.match(r"\s*(?:pub(?:\([a-z]+\))? )?(?:async )?fn ([a-z_0-9]+)", line)
            if not m:
                continue
            depth, seen = 0, False
            for j in range(i, len(lines)):
                depth += lines[j].count("{") - lines[j].count("}")
                seen = seen or "{" in lines[j]
                if seen and depth <= 0:
                    found.append((j - i + 1, f"{f}: {m.group(1)}"))
                    break
                if not seen and lines[j].rstrip().endswith(";"):
                    break
    return sorted(found, reverse=True)[:n]


def main():
    edges = graph()
    comps = [c for c in sccs(edges) if len(c) > 1]
    comps.sort(key=len, reverse=True)
    print(f"files: {len(edges) - 1} (+ mod.rs), edges: {sum(len(v) for v in edges.values())}")
    print(f"import circles (SCCs of more than one file): {len(comps)}")
    for c in comps:
        print(f"  {len(c)}: {' '.join(c)}")
    if "--edges" in sys.argv:
        for m in sorted(edges):
            if edges[m]:
                print(f"  {m} -> {' '.join(sorted(edges[m]))}")
    if "--catalog" in sys.argv:
        fields, uses, files = catalog_fields()
        print(f"Catalog pub fields: {len(fields)} ({' '.join(fields)})")
        print(f"  reached from outside catalog.rs: {uses} times in {len(files)} files")
        for f in files:
            print(f"    {f}")
    print("largest functions in src/engine/ (lines):")
    for size, name in largest_functions():
        print(f"  {size:5} {name}")


if __name__ == "__main__":
    main()
