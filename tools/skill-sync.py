#!/usr/bin/env python3
"""skill-sync.py - rewrites the instructions paragraph of
integrations/openclaw/SKILL.md from common/tools.c's `instructions`
(the mcp suite fails when they differ). Run after changing either."""
import re, sys, os
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
src = open(os.path.join(root, "common/tools.c")).read()
m = re.search(r'static const char instructions\[\] =\n(.*?);\n', src, re.S)
instr = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))).encode().decode("unicode_escape")
p = os.path.join(root, "integrations/openclaw/SKILL.md")
s = open(p).read()
lines = s.split("\n")
i = next(k for k, l in enumerate(lines) if l.startswith("detm tracks your work"))
lines[i] = instr
open(p, "w").write("\n".join(lines))
