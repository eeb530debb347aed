import re, subprocess, sys
C='/tmp/nvdis/x/nvidia/cu13/bin/cuobjdump'
def funcs(path):
    out = subprocess.run([C, '-sass', path], capture_output=True, text=True).stdout
    fs = {}; cur = None
    for line in out.splitlines():
        m = re.search(r'Function : (\S+)', line)
        if m: cur = m.group(1); fs[cur] = []; continue
        if cur is None: continue
        m = re.match(r'\s+/\*[0-9a-f]{4,}\*/\s+(.*?);', line)
        if m: fs[cur].append(m.group(1).strip())
    return fs
a, b = funcs(sys.argv[1]), funcs(sys.argv[2])
pat = sys.argv[3] if len(sys.argv) > 3 else ''
same = diff = 0
for k in sorted(set(a) | set(b)):
    if pat and not re.search(pat, k): continue
    if a.get(k) == b.get(k): same += 1
    else:
        diff += 1; print('DIFF', k, len(a.get(k, [])), len(b.get(k, [])))
print(f'{sys.argv[1]} vs {sys.argv[2]}: {same} identical, {diff} differ')
