import re, sys, hashlib
def fns(path):
    lines = open(path).read().split("\n")
    out, alias = {}, None
    i = 0
    while i < len(lines):
        l = lines[i]
        m = re.match(r"\s*type T = (.*);$", l)
        if m: alias = m.group(1)
        m = re.match(r"(\s*)(pub )?(unsafe )?extern \"C\" fn (\w+)", l)
        if m:
            ind, name = m.group(1), m.group(4)
            j = i - 1
            while j >= 0 and not lines[j].rstrip().endswith(("}", ";", "{")):
                j -= 1
            head = " ".join(x.strip() for x in lines[j + 1:i])
            e = re.findall(r'#\[export_name\s*=\s*"(.*?)"\]', head)
            export = e[-1] if e else None
            if export is None: export = name
            k = i
            while not (lines[k].startswith(ind + "}") and k > i) and not (k == i and l.rstrip().endswith("}")):
                k += 1
            body = "\n".join(lines[i:k + 1])
            if alias: body = re.sub(r"\bT\b", alias, body)
            body = re.sub(r"\bfn \w+", "fn _", body, count=1)   # the Rust name (the C name is the key)
            body = re.sub(r"\s+", " ", body)                      # pretty-printer line breaks
            body = re.sub(r"\b(8|16|32|64|128) / 8\b", lambda m: str(int(m.group(1)) // 8), body)  # constant byte counts
            if export in out: print("DUP", export)
            out[export] = body
            i = k
        i += 1
    return out
old, new = fns(sys.argv[1]), fns(sys.argv[2])
print("C entry points: old %d, new %d; only old %s; only new %s" % (len(old), len(new), sorted(set(old) - set(new))[:5], sorted(set(new) - set(old))[:5]))
both = sorted(set(old) & set(new))
diff = [n for n in both if old[n] != new[n]]
print("compared %d, identical expanded text %d, differ %d" % (len(both), len(both) - len(diff), len(diff)))
for n in diff: print("DIFF", n)
if len(sys.argv) > 3:
    for n in diff[:int(sys.argv[3])]:
        print("---", n); print(old[n]); print("+++"); print(new[n])
