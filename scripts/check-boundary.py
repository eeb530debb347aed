#!/usr/bin/env python3
"""Fails when a C entry point of src/capi/ does not run its body through the C boundary.

    python3 scripts/check-boundary.py      # run by `make lint`; exit 1 on an unfenced routine

The boundary (src/capi/mod.rs) is `boundary` and its reactions: fence, with_state, status,
status_of, null_on_error, alloc_or_null. An `extern "C" fn` passes when its body calls one of
them, or calls a helper (a function or a macro of src/capi/) that does, at any depth. A routine
that can neither fail nor panic may stay outside; it is listed in OUTSIDE with the reason, and
one listed that no longer exists, or that now reaches the boundary, fails the check too (the
list stays exact). The naked x87 trampolines of src/sys/longdouble.rs jump to entry points here.
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from importlib import import_module  # noqa: E402

code_only = import_module("check-layers").code_only

BOUNDARY = {"boundary", "fence", "with_state", "status", "status_of", "null_on_error", "alloc_or_null",
            # capi/nvshmem/mod.rs re-exports status/status_of under these names
            "nv_status", "nv_status_of"}

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
    "nvshmemx_cumodule_finalize": "drops a registration from a table (no error to report)",
    "nvshmemx_culibrary_finalize": "drops a registration from a table (no error to report)",
    "rshmem_device_state_unregister": "drops a registration from a table (no error to report)",
}


def bodies(text):
    """(kind, name, body, offset) of every `fn` and `macro_rules!` in the code-only text (where
    `extern "C" fn` reads `extern  fn`: string literals are blanked)."""
    for m in re.finditer(r'\b(?:(fn)\s+(\w+)|macro_rules!\s*(\w+))', text):
        kind, name = ("fn", m.group(2)) if m.group(1) else ("macro", m.group(3))
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


def main():
    files = sorted(glob.glob(os.path.join(ROOT, "src/capi/**/*.rs"), recursive=True))
    helpers, entries = {}, []
    for f in files:
        raw = open(f).read()
        text = code_only(raw)
        for kind, name, body, at in bodies(text):
            helpers.setdefault(name, []).append(body)
            if kind == "fn" and re.search(r"\bextern\s+fn\s+" + re.escape(name) + r"\b", text[max(at - 20, 0):at + len(name) + 5]):
                entries.append((os.path.relpath(f, ROOT), text.count("\n", 0, at) + 1, name, body))

    def calls(body):
        return set(re.findall(r"\b(\w+)\s*!?\s*\(", body)) | set(re.findall(r"\b(\w+)!\s*[\[{]", body))

    # Names that reach the boundary: a fixpoint over helpers' bodies.
    reach = set(BOUNDARY)
    changed = True
    while changed:
        changed = False
        for name, bs in helpers.items():
            if name not in reach and any(calls(b) & reach for b in bs):
                reach.add(name)
                changed = True

    bad, outside_seen = [], set()
    for path, line, name, body in entries:
        fenced = bool(calls(body) & reach)
        if name in OUTSIDE:
            outside_seen.add(name)
            if fenced:
                bad.append(f"{path}:{line}: {name} reaches the boundary now: remove it from OUTSIDE")
        elif not fenced:
            bad.append(f"{path}:{line}: {name} does not run its body through the C boundary"
                       " (wrap it in capi::fence/with_state/status/... or, if it cannot fail or"
                       " panic, list it in OUTSIDE with the reason)")
    for name in sorted(set(OUTSIDE) - outside_seen):
        bad.append(f"scripts/check-boundary.py: OUTSIDE names {name}, which is no C entry point of src/capi/")
    for b in bad:
        print(b)
    if bad:
        print(f"check-boundary: {len(bad)} problem(s)")
        return 1
    print(f"check-boundary: {len(entries)} C entry-point definitions (a macro's counts once), {len(entries) - len(outside_seen)} through the boundary,"
          f" {len(outside_seen)} outside it, each with its reason")
    return 0


if __name__ == "__main__":
    sys.exit(main())
