#!/usr/bin/env python3
"""Fails when a C entry point of src/capi/ does not run its body through the C boundary macro.

    python3 scripts/check-boundary.py      # run by `make lint`; exit 1 on an unfenced routine

The boundary (src/capi/mod.rs) is one macro, `ffi_boundary!(name [=> Reaction], body)`. Every
`extern "C" fn` of src/capi/ (its signature written out, as cbindgen and the headers read it)
has a body that is exactly one call of it, and the name it gives is the routine's own: the
function's name (an identifier) or, for a function exported under another name, the very
expression of its `#[export_name = ...]`. Two other bodies pass: an alias, whose body is one call
of another entry point of src/capi/ with its arguments (start_pes, _my_pe, ...), and a routine
that can neither fail nor panic, listed in OUTSIDE with the reason; one listed that no longer
exists, or that now runs through the macro, fails the check too (the list stays exact). The naked
x87 trampolines of src/sys/longdouble.rs jump to entry points here. An entry point that a
`macro_rules!` arm defines (`extern "C" fn $f`) is checked in the macro's text, once per arm:
its call must give `$f` or the arm's export_name expression. Where that arm's matcher is only
identifiers (`($my_pe:ident, $n_pes:ident)`), the names each call of the macro gives for the
defined parameters are entry points too, so an alias may call them (`_my_pe` -> `shmem_my_pe`);
the summary lists them. A commented-out `extern "C" fn` (an example in a comment) is no entry point.
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from importlib import import_module  # noqa: E402

code_only = import_module("check-layers").code_only

MACRO = "ffi_boundary"

# Entry points that stay outside the boundary: nothing in them can fail or panic.
OUTSIDE = {
    "shmem_pcontrol": "does nothing (profiling levels are accepted and ignored)",
    "shmemx_wtime": "reads a monotonic clock",
    "shmem_global_exit": "ends the process; with no state it exits directly, so it must not need one",
    "nvshmem_global_exit": "calls shmem_global_exit",
    "globalexit": "calls shmem_global_exit (pre-1.0 name)",
    "nvshmemx_init_status": "reads one flag",
    "nvshmemid_init_status": "calls nvshmemx_init_status",
    "nvshmemx_mc_ptr": "returns NULL (no multicast objects are ever made)",
    # nvshmemx_cumodule_finalize, nvshmemx_culibrary_finalize (capi/nvshmem/module.rs, one arm)
    "$finalize": "drops a registration from a table (no error to report)",
    "rshmem_device_state_unregister": "drops a registration from a table (no error to report)",
    "rshmem_proxy_route_compiled": "sets one flag at program load (no error to report, nothing to panic)",
}


def bodies(text):
    """(kind, name, body, offset) of every `fn` and `macro_rules!` in the code-only text (where
    `extern "C" fn` reads `extern  fn`: string literals are blanked)."""
    for m in re.finditer(r'(?:\bfn\s+(\$?\w+)|\bmacro_rules!\s*(\w+))', text):
        kind, name = ("fn", m.group(1)) if m.group(1) else ("macro", m.group(2))
        i = m.end()
        # A fn's body is the first `{` at nesting 0 of its signature; a `;` first: no body.
        depth = 0
        while i < len(text):
            c = text[i]
            if c in "([<" and kind == "fn":
                depth += 1
            elif c in ")]>" and kind == "fn" and depth:
                depth -= 1 if not (c == ">" and text[i - 1] == "-") else 0
            elif c == ";" and depth == 0:
                i = -1
                break
            elif c == "{" and depth == 0:
                break
            i += 1
        if i < 0 or i >= len(text):
            continue
        j, depth = i, 0
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        yield kind, name, text[i:j + 1], m.start()


def one_call(body):
    """(callee, argument text) when `body` ({ ... }) is one call `f(...)` or `m!(...)`, else None."""
    inner = body[1:-1].strip()
    m = re.match(r"(?:\$crate::capi::|crate::capi::|super::(?:super::)?|[\w:]*::)?(\w+)(!?)\s*\(", inner)
    if not m or not inner.endswith(")"):
        return None
    depth, i = 0, m.end() - 1
    for j in range(i, len(inner)):
        depth += {"(": 1, ")": -1}.get(inner[j], 0)
        if depth == 0:
            return (m.group(1) + m.group(2), inner[i + 1:j]) if j == len(inner) - 1 else None
    return None


def name_arg(args):
    """The macro's first argument: the text before its first top-level `,` or `=>`."""
    depth = 0
    for j, c in enumerate(args):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and (c == "," or args.startswith("=>", j)):
            return args[:j].strip()
    return args.strip()


def ident_arms(body):
    """The arms of a `macro_rules!` body whose matcher is only `$a:ident` parameters, as (the
    parameters in order, the ones it defines an entry point with: `extern fn $a`)."""
    arms = []
    for m in re.finditer(r"\(\s*(\$\w+\s*:\s*ident(?:\s*,\s*\$\w+\s*:\s*ident)*)\s*\)\s*=>\s*\{", body):
        params = [p.split(":")[0].strip() for p in m.group(1).split(",")]
        depth, j = 0, m.end() - 1
        while j < len(body):
            depth += {"{": 1, "}": -1}.get(body[j], 0)
            if depth == 0:
                break
            j += 1
        defined = set(re.findall(r"\bextern\s+fn\s+(\$\w+)", body[m.end():j]))
        if defined & set(params):
            arms.append((params, defined))
    return arms


def made_names(texts, arms):
    """The C names the calls `m!(a, b, ...)` of those arms define (the arguments given for the
    parameters after `extern fn`), so that an alias may call them."""
    made = set()
    for name, its_arms in arms.items():
        for text in texts:
            for m in re.finditer(r"\b" + re.escape(name) + r"!\s*\(\s*(\w+(?:\s*,\s*\w+)*)\s*,?\s*\)", text):
                args = [a.strip() for a in m.group(1).split(",")]
                for params, defined in its_arms:
                    if len(params) == len(args):
                        made |= {a for p, a in zip(params, args) if p in defined}
    return made


def main():
    files = sorted(glob.glob(os.path.join(ROOT, "src/capi/**/*.rs"), recursive=True))
    entries, names, arms, texts = [], set(), {}, []
    for f in files:
        raw = open(f).read()
        text = code_only(raw)
        texts.append(text)
        # The raw text of each entry point, in order (for names and export_name strings, which
        # code_only blanks): from its attributes to the next entry point.
        starts = [m.start() for m in re.finditer(r'extern "C" fn \$?\w+', raw)
                  if "//" not in raw[raw.rfind("\n", 0, m.start()) + 1:m.start()]]
        ends = starts[1:] + [len(raw)]
        heads = [raw[(starts[i - 1] if i else 0):st] for i, st in enumerate(starts)]
        k = 0
        for kind, name, body, at in bodies(text):
            if kind == "macro":
                arms[name] = ident_arms(body)
            if kind == "fn" and re.search(r"\bextern\s+fn\s+" + re.escape(name) + r"(?!\w)", text[max(at - 20, 0):at + len(name) + 5]):
                span = raw[starts[k]:ends[k]] if k < len(starts) else ""
                # Its attributes: the last export_name between the previous entry point and it.
                exports = re.findall(r"#\[export_name = (.*)\]", heads[k]) if k < len(starts) else []
                export = exports[-1].strip() if exports and heads[k].rfind("#[export_name") > heads[k].rfind("{") else None
                k += 1
                given = None
                m = re.search(MACRO + r"!\(", span)
                if m:
                    given = name_arg(span[m.end():])
                entries.append((os.path.relpath(f, ROOT), text.count("\n", 0, at) + 1, name, body, export, given))
                names.add(name)

    made = made_names(texts, arms)
    names |= made
    bad, outside_seen, counts = [], set(), {"macro": 0, "alias": 0}
    for path, line, name, body, export, given in entries:
        call = one_call(body)
        fenced = call is not None and call[0] == MACRO + "!"
        if name in OUTSIDE:
            outside_seen.add(name)
            if fenced:
                bad.append(f"{path}:{line}: {name} runs through {MACRO}! now: remove it from OUTSIDE")
            continue
        if fenced:
            # The function's name, its export_name expression, or (no export_name) a literal.
            ok = given == name or (export is not None and given == export) or (export is None and (given or "").startswith('"'))
            if not ok:
                bad.append(f"{path}:{line}: {name}: {MACRO}! names the routine {given}; give the function's name"
                           f" ({name}) or its export_name expression ({export})")
            counts["macro"] += 1
        elif call is not None and call[0] in names:
            counts["alias"] += 1
        else:
            bad.append(f"{path}:{line}: {name}: the body is not one {MACRO}!(...) call (wrap it:"
                       f" `{MACRO}!({name}, |st| ...)`; or, if it cannot fail or panic, list it in OUTSIDE with the reason)")
    for name in sorted(set(OUTSIDE) - outside_seen):
        bad.append(f"scripts/check-boundary.py: OUTSIDE names {name}, which is no C entry point of src/capi/")
    for b in bad:
        print(b)
    if bad:
        print(f"check-boundary: {len(bad)} problem(s)")
        return 1
    print(f"check-boundary: {len(entries)} C entry-point definitions (a macro's counts once): {counts['macro']} one {MACRO}! call each,"
          f" {counts['alias']} aliases of another entry point, {len(outside_seen)} outside it, each with its reason;"
          f" {len(made)} named by macro calls of all-ident arms ({', '.join(sorted(made))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
