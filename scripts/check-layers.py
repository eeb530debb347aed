#!/usr/bin/env python3
"""Fails when a module of src/ reaches a module of a higher layer (docs/ARCHITECTURE.md, "Layers"),
or when capi/ names a raw binding table (cuda::sys, ib::sys, fabric::sys).

    python3 scripts/check-layers.py      # run by `make lint`; exit 1 on any problem found

A file belongs to the top-level module it sits in (src/runtime/gpu/coll.rs is `runtime`). Every
`crate::NAME` path in its code counts, in a `use` or inline, and so does each name of a
`use crate::{a, b::c}` group; comments and string literals do not. A module may reach its own
layer and those below. The exceptions that remain are listed in ALLOWED with the reason.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The layers from the floor up (docs/ARCHITECTURE.md). src/bin/ is not the library: its
# programs use the crate from outside, like any other user.
LAYERS = [
    ["abi", "error", "env", "log"],
    ["sys", "cuda", "ib", "fabric"],
    ["bootstrap", "heap", "transport", "proxy", "ibgda"],
    ["runtime"],
    ["capi"],
]
LEVEL = {m: i for i, names in enumerate(LAYERS) for m in names}

# (module, path it may reach although that is upward): why.
ALLOWED = {
    ("bootstrap", "runtime::gpu::mpi"):
        "NVSHMEM_BOOTSTRAP=MPI: rank, size and the unique id come from the runtime's lazily loaded"
        " libmpi, the same loader nvshmemx_init_attr's MPI communicator uses",
    ("fabric", "transport::node"):
        "the error for 'no provider fits' names this host by the node identity that transport::node"
        " owns (one host-name lookup for the bootstrap, the transports and the fabric)",
}


# Downward paths that are still refused: the C layer names the CUDA, verbs and libfabric
# libraries through their safe modules, never their raw binding tables (issue 22: "capi no
# longer imports cuda::sys"). Matched with or without `crate::` (after `use crate::cuda`).
RAW_BINDINGS = re.compile(r"(?<![\w$])(?:crate::)?((?:cuda|ib|fabric)::sys)\b")
NO_RAW_BINDINGS = ["capi"]


def code_only(text):
    """The text with comments, string and char literals blanked (line numbers kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == '"' or text.startswith('r"', i) or text.startswith('r#"', i) or text.startswith('b"', i):
            m = re.match(r'b?r(#*)"', text[i:])
            if m:  # raw string: ends at "###
                end = text.find('"' + m.group(1), i + len(m.group(0)))
                j = n if end < 0 else end + 1 + len(m.group(1))
            else:
                j = i + (2 if c == "b" else 1)
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4] + text[i + 4:i + 12]):
            m = re.match(r"'(\\[^']*|[^\\'])'", text[i:])
            i += len(m.group(0)) if m else 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def group_paths(body):
    """`a, b::{c, d}, e::f` -> ["a", "b::c", "b::d", "e::f"] (top-level commas only)."""
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += (ch == "{") - (ch == "}")
        cur += ch
    parts.append(cur)
    paths = []
    for p in (p.strip() for p in parts):
        if not p:
            continue
        m = re.match(r"([\w:]*?)::\{(.*)\}$", p, re.S)
        if m:
            paths += [m.group(1) + "::" + q for q in group_paths(m.group(2))]
        else:
            paths.append(p.split(" as ")[0].strip())
    return paths


def references(code):
    """(line, path) of every crate:: path in the code."""
    refs = []
    for m in re.finditer(r"(?<![\w$])crate::(\{|\w+(?:::\w+)*)", code):
        line = code.count("\n", 0, m.start()) + 1
        if m.group(1) == "{":
            depth, j = 1, m.end()
            while depth:
                depth += (code[j] == "{") - (code[j] == "}")
                j += 1
            refs += [(line, p) for p in group_paths(code[m.end():j - 1])]
        else:
            refs.append((line, m.group(1)))
    return refs


def module_of(rel):
    parts = rel.split(os.sep)  # src/NAME.rs or src/NAME/...
    return parts[1][:-3] if len(parts) == 2 else parts[1]


def main():
    errors, used = [], set()
    for base, dirs, files in os.walk(os.path.join(ROOT, "src")):
        dirs[:] = sorted(d for d in dirs if not (base.endswith("src") and d == "bin"))
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(base, f)
            rel = os.path.relpath(path, ROOT)
            mod = module_of(rel)
            if mod not in LEVEL:
                if mod != "lib":
                    errors.append("%s: module `%s` is in no layer; add it to LAYERS (and to"
                                  " docs/ARCHITECTURE.md)" % (rel, mod))
                continue
            code = code_only(open(path).read())
            if mod in NO_RAW_BINDINGS:
                for m in RAW_BINDINGS.finditer(code):
                    errors.append("%s:%d: `%s` names crate::%s, a raw binding table; use the safe module"
                                  " (%s) instead" % (rel, code.count("\n", 0, m.start()) + 1, mod,
                                                     m.group(1), m.group(1).split("::")[0]))
            for line, target in references(code):
                top = target.split("::")[0]
                if top not in LEVEL or LEVEL[top] <= LEVEL[mod]:
                    continue
                allowed = [k for k in ALLOWED if k[0] == mod and (target + "::").startswith(k[1] + "::")]
                if allowed:
                    used.update(allowed)
                    continue
                errors.append("%s:%d: `%s` (layer %d) reaches up to crate::%s (layer %d)"
                              % (rel, line, mod, LEVEL[mod], target, LEVEL[top]))
    for key in sorted(set(ALLOWED) - used):
        errors.append("check-layers.py: the exception %s -> %s is no longer needed; remove it" % key)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print("check-layers: %d problem(s) (upward references, raw binding tables); layers are %s" % (len(errors), " < ".join(
            "{" + ", ".join(names) + "}" for names in LAYERS)), file=sys.stderr)
        return 1
    print("check-layers: no upward references (%d exception(s), each with its reason); no raw binding"
          " table named from %s" % (len(ALLOWED), ", ".join(NO_RAW_BINDINGS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
