#!/usr/bin/env python3
"""Writes README.md's environment table from the one settings list, src/env.rs (SETTINGS).

    python3 scripts/gen_env_table.py          # rewrite the table between the markers
    python3 scripts/gen_env_table.py --check  # exit 1 if README.md's table is not current

The table sits between `<!-- env-table:begin -->` and `<!-- env-table:end -->`. Its format is
the one `rshmem-info -r` prints (src/env.rs, markdown_table); ctest/scripts/info_tool.sh checks
that both agree.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- env-table:begin -->", "<!-- env-table:end -->"
STRING = r'"((?:[^"\\]|\\.)*)"'


def unescape(text):
    return re.sub(r"\\(.)", r"\1", text)


def settings():
    source = open(os.path.join(ROOT, "src/env.rs")).read()
    table = source[source.index("pub const SETTINGS: &[Setting] = &["):]
    table = table[:table.index("\n];")]
    pattern = re.compile(r"Setting\s*\{\s*name:\s*" + STRING + r",\s*default:\s*" + STRING
                         + r",\s*aliases:\s*&\[(.*?)\],\s*help:\s*" + STRING + r",?\s*\}", re.S)
    rows = []
    for m in pattern.finditer(table):
        aliases = [unescape(a) for a in re.findall(STRING, m.group(3))]
        rows.append((unescape(m.group(1)), unescape(m.group(2)), aliases, unescape(m.group(4))))
    if len(rows) != table.count("Setting {"):
        sys.exit("gen_env_table: could not read every Setting in src/env.rs (%d of %d)"
                 % (len(rows), table.count("Setting {")))
    return rows


def markdown():
    lines = ["| setting | default | meaning |", "| --- | --- | --- |"]
    for name, default, aliases, help_text in settings():
        meaning = help_text.replace("|", "\\|")
        if aliases:
            meaning += ". Also read as " + ", ".join("`%s`" % a for a in aliases)
        lines.append("| `%s` | %s | %s |" % (name, "`%s`" % default if default else "(empty)", meaning))
    return "\n".join(lines) + "\n"


def main(argv):
    path = os.path.join(ROOT, "README.md")
    text = open(path).read()
    if BEGIN not in text or END not in text:
        sys.exit("gen_env_table: README.md has no %s ... %s markers" % (BEGIN, END))
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + BEGIN + "\n" + markdown() + END + tail
    if "--check" in argv[1:]:
        if new != text:
            sys.exit("gen_env_table: README.md's environment table differs from src/env.rs;"
                     " run python3 scripts/gen_env_table.py")
        print("README environment table: up to date")
        return 0
    if new != text:
        open(path, "w").write(new)
        print("gen_env_table: wrote README.md's environment table")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
