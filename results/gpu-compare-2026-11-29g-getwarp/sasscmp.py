#!/usr/bin/env python3
"""sasscmp.py A.sass B.sass: per kernel of cuobjdump -sass, identical or not (addresses and encodings dropped)."""
import re, sys
def funcs(p):
    out, cur = {}, None
    for line in open(p):
        m = re.search(r"Function : (\S+)", line)
        if m:
            cur = m.group(1); out[cur] = []; continue
        if cur is None: continue
        line = re.sub(r"/\*[0-9a-f]{4,}\*/", "", line); line = re.sub(r"/\* 0x[0-9a-f]+ \*/", "", line).strip()
        if line: out[cur].append(re.sub(r"0x[0-9a-f]+", "ADDR", line) if ("BRA" in line or "CALL" in line or "BSSY" in line or "WARPSYNC" in line) else line)
    return out
a, b = funcs(sys.argv[1]), funcs(sys.argv[2])
for k in sorted(set(a) | set(b)):
    if k not in a or k not in b: print("only in one:", k); continue
    print("same" if a[k] == b[k] else f"DIFF ({len(a[k])} vs {len(b[k])} lines)", k)
