#!/usr/bin/env python3
"""swap.py DIR TARGET STOPFILE - the memory suite's race (issue 33): makes
DIR and a symbolic link to TARGET (outside the workspace) swap places over
and over, until STOPFILE exists; DIR is a real folder again at the end.
Uses renameat2(RENAME_EXCHANGE), so DIR always exists (one name, two
things in turn); without it, two plain renames. Prints "swaps N"."""
import ctypes
import os
import sys

d, target, stop = sys.argv[1:4]
link = d + ".link"
keep = d + ".real"
os.symlink(target, link)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
exchange = getattr(libc, "renameat2", None)


def swap():
    if exchange is not None and exchange(AT_FDCWD, d.encode(), AT_FDCWD, link.encode(), RENAME_EXCHANGE) == 0:
        return
    # No renameat2: DIR aside, the link in its place (then back).
    if os.path.islink(d):
        os.rename(d, link)
        os.rename(keep, d)
    else:
        os.rename(d, keep)
        os.rename(link, d)


n = 0
while not os.path.exists(stop):
    for _ in range(50):
        swap()
        n += 1
if os.path.islink(d):
    swap()
    n += 1
print("swaps", n)
