#!/usr/bin/env python3
"""Writes the settings reference from the one settings list, src/env.rs (its `settings!` block), into
README.md (a Markdown table) and docs/man/rshmem.3 (its ENVIRONMENT section).

    python3 scripts/gen_env_table.py          # rewrite both between their markers
    python3 scripts/gen_env_table.py --check  # exit 1 if either is not current

README's table sits between `<!-- env-table:begin -->` and `<!-- env-table:end -->`, in the
format `rshmem-info -m` prints (src/env.rs, markdown_table; ctest/scripts/info_tool.sh checks
that both agree); the man page's list between the roff comments `.\\" env-table:begin` / `end`.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKERS = {"README.md": ("<!-- env-table:begin -->", "<!-- env-table:end -->"),
           "docs/man/rshmem.3": ('.\\" env-table:begin', '.\\" env-table:end')}
STRING = r'"((?:[^"\\]|\\.)*)"'


def unescape(text):
    return re.sub(r"\\(.)", r"\1", text)


def settings():
    source = open(os.path.join(ROOT, "src/env.rs")).read()
    table = source[source.index("\nsettings! {\n"):]
    table = table[:table.index("\n}\n")]
    pattern = re.compile(r"\n    ([A-Z][A-Z0-9_]*)\s*\{\s*default:\s*" + STRING + r",\s*aliases:\s*\[(.*?)\],\s*help:\s*"
                         + STRING + r",?\s*\}", re.S)
    rows = []
    for m in pattern.finditer(table):
        aliases = [unescape(a) for a in re.findall(STRING, m.group(3))]
        rows.append((m.group(1), unescape(m.group(2)), aliases, unescape(m.group(4))))
    declared = len(re.findall(r"\n    [A-Z][A-Z0-9_]* \{", table))
    if len(rows) != declared:
        sys.exit("gen_env_table: could not read every setting in src/env.rs (%d of %d)" % (len(rows), declared))
    undescribed = [name for name, _, _, help_text in rows if len(help_text.split()) < 3]
    if undescribed:
        sys.exit("gen_env_table: settings without a description in src/env.rs: " + ", ".join(undescribed))
    return rows


def markdown():
    lines = ["| setting | default | meaning |", "| --- | --- | --- |"]
    for name, default, aliases, help_text in settings():
        meaning = help_text.replace("|", "\\|")
        if aliases:
            meaning += ". Also read as " + ", ".join("`%s`" % a for a in aliases)
        lines.append("| `%s` | %s | %s |" % (name, "`%s`" % default if default else "(empty)", meaning))
    return "\n".join(lines) + "\n"


def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in ".'" else text


def man_section():
    lines = []
    for name, default, aliases, help_text in settings():
        lines += [".TP", ".B %s" % roff(name),
                  roff("(default %s) %s" % (default if default else "empty", help_text)
                       + (". Also read as " + ", ".join(aliases) if aliases else "") + ".")]
    return "\n".join(lines) + "\n"


def replace_between(rel, body):
    """The file's text with `body` between its markers, or exit when the markers are missing."""
    begin, end = MARKERS[rel]
    text = open(os.path.join(ROOT, rel)).read()
    if begin not in text or end not in text:
        sys.exit("gen_env_table: %s has no %s ... %s markers" % (rel, begin, end))
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return text, head + begin + "\n" + body + end + tail


def main(argv):
    stale = []
    for rel, body in [("README.md", markdown()), ("docs/man/rshmem.3", man_section())]:
        old, new = replace_between(rel, body)
        if new == old:
            continue
        if "--check" in argv[1:]:
            stale.append(rel)
        else:
            open(os.path.join(ROOT, rel), "w").write(new)
            print("gen_env_table: wrote the settings of " + rel)
    if stale:
        sys.exit("gen_env_table: the settings in %s differ from src/env.rs; run python3 scripts/gen_env_table.py"
                 % " and ".join(stale))
    if "--check" in argv[1:]:
        print("settings reference (README.md, docs/man/rshmem.3): up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
