"""Checks `rshmem-info -r` (reStructuredText): docutils parses it without a warning, and it is a
definition list with one item per setting that `rshmem-info -a` shows, in that order, each with
its variables, its default and its meaning.
    python3 info_rest.py OUTPUT.rst NAMES.txt    (NAMES.txt: -a's setting names, one a line)
Prints the number of settings on success; fails with the reason."""
import sys

import docutils.core
import docutils.nodes as nodes

text = open(sys.argv[1]).read()
names = open(sys.argv[2]).read().split()
# halt_level 2: any markup warning (an unescaped * or a word ending in _) stops the parse.
doc = docutils.core.publish_doctree(text, settings_overrides={"halt_level": 2, "report_level": 2})
items = list(doc.findall(nodes.definition_list_item))
terms = [item.next_node(nodes.term).astext() for item in items]
assert terms == names, "the entries %s are not -a's settings %s" % (terms, names)
for name, item in zip(terms, items):
    fields = {f[0].astext(): f[1].astext() for f in item.findall(nodes.field)}
    want = "RSHMEM_%s, SHMEM_%s, NVSHMEM_%s" % (name, name, name)
    assert fields.get("Variables") == want, "%s: Variables %r, want %r" % (name, fields.get("Variables"), want)
    assert fields.get("Default"), "%s has no Default field" % name
    meaning = item.next_node(nodes.definition)[-1]
    assert isinstance(meaning, nodes.paragraph) and meaning.astext(), "%s has no meaning paragraph" % name
first = {f[0].astext(): f[1].astext() for f in items[0].findall(nodes.field)}
assert first["Default"] == "1G" and "SMA_SYMMETRIC_SIZE" in first["Also read as"], first
assert "bytes per PE" in items[0].next_node(nodes.definition)[-1].astext()
print(len(items))
