#!/usr/bin/env python3
"""Which B-trees a storage's writes touch: the pages in Recipes.sqlite's write-ahead log, per commit, by table or index.

    Benchmarks/Tools/wal-pages.py DATA/Recipes.sqlite [--skip N]

Run it while recipe-storage runs (the log is folded into the database when the last connection closes). It copies the
database and its log aside, maps every logged page to its B-tree with SQLite's `dbstat` table, and prints how many pages
an average commit wrote to each. `--skip N` leaves out the first N frames (the log as it was before the writes to look at:
run once before, note the frame count it prints, then again with `--skip` that count).
"""
import argparse, collections, os, shutil, sqlite3, struct, tempfile

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("database")
parser.add_argument("--skip", type=int, default=0, help="frames to leave out (the log as it was before)")
args = parser.parse_args()

with open(args.database + "-wal", "rb") as f:
    data = f.read()
if len(data) < 32:
    raise SystemExit("the write-ahead log is empty: nothing was written since the last checkpoint")
_, _, page_size, _, salt1, salt2, _, _ = struct.unpack(">IIIIIIII", data[:32])
frames, offset = [], 32
while offset + 24 + page_size <= len(data):
    page, commit, s1, s2 = struct.unpack(">IIII", data[offset:offset + 16])
    if (s1, s2) != (salt1, salt2):
        break  # frames of an earlier generation of the log
    frames.append((page, commit))
    offset += 24 + page_size
print(f"{len(frames)} frames of {page_size} bytes in the log")
frames = frames[args.skip:]
commits = sum(1 for _, commit in frames if commit) or 1

with tempfile.TemporaryDirectory() as folder:
    copy = os.path.join(folder, "copy.sqlite")
    shutil.copy(args.database, copy)
    shutil.copy(args.database + "-wal", copy + "-wal")
    owner = dict(sqlite3.connect(copy).execute("SELECT pageno, name FROM dbstat"))
counts = collections.Counter(owner.get(page, "(free list)") for page, _ in frames)
print(f"{commits} commits, {len(frames) / commits:.1f} pages each")
for name, count in counts.most_common():
    print(f"{count / commits:7.2f}  {name}")
