"""One file map, and it cannot drift (issue 25, item 6).

docs/architecture.md's section "Where each concern lives" holds the only map of the
source tree: a table for the C kernel (its files relative to ``csrc/``) and one for the
Python package (relative to ``src/springsim/``), each row naming one or more files in
backticks in its first column and saying in the second what they hold. Every source
file must be named there (``csrc/``: every ``*.c`` and ``*.h``; ``src/springsim/``:
every ``*.py`` and ``*.pyi``, subpackages included, and the viewer's ``*.js``), and
every file named there must exist.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
SECTION = "## Where each concern lives"

# The folders the tables' names are relative to, and the files each must name.
TREES = {
    "csrc/": ("*.c", "*.h"),
    "src/springsim/": ("*.py", "*.pyi", "*.js"),
}


def map_tables(markdown: str) -> dict[str, list[str]]:
    """Folder -> the file names in the first column of its tables, in order.

    A table belongs to the folder named (in backticks, with its trailing slash) in the
    nearest line of text above it; the header row and the separator row are skipped.
    """
    section = markdown.split(f"\n{SECTION}\n", 1)[1]
    section = re.split(r"^## ", section, maxsplit=1, flags=re.M)[0]
    section = re.sub(r"^```.*?^```$", "", section, flags=re.S | re.M)  # no code blocks
    tables: dict[str, list[str]] = {}
    folder = None
    rows_seen = 0  # rows of the current table (0: not in a table)
    for line in section.splitlines():
        if not line.startswith("|"):
            rows_seen = 0
            if line.strip():
                named = [f for f in TREES if f"`{f}`" in line]
                if named:
                    folder = named[-1]
            continue
        rows_seen += 1
        if rows_seen <= 2:  # the header and the |---| row
            continue
        assert folder is not None, f"a table before any folder is named: {line}"
        first = line.strip().strip("|").split("|")[0]
        names = re.findall(r"`([^`]+)`", first)
        assert names, f"a row that names no file in its first column: {line}"
        tables.setdefault(folder, []).extend(names)
    return tables


def tree_files(folder: str) -> set[str]:
    base = ROOT / folder
    return {
        path.relative_to(base).as_posix()
        for pattern in TREES[folder]
        for path in base.rglob(pattern)
        if "__pycache__" not in path.parts
    }


def test_map_tables_reads_first_columns_by_folder():
    markdown = "\n".join(
        [
            "# Title",
            "## Where each concern lives",
            "The kernel, `csrc/`:",
            "",
            "| file | concern |",
            "|---|---|",
            "| `a.c` | the `b.c` of the second column is not a name |",
            "| `c.h`, `d.c` and `e/f.c` | several |",
            "",
            "The package, `src/springsim/`:",
            "",
            "| file | concern |",
            "|---|---|",
            "| `viewer/static/x.js` | one |",
            "```",
            "| `not/a/row.py` | in a code block |",
            "```",
            "## Next",
            "| `later.py` | after the section |",
        ]
    )
    assert map_tables(markdown) == {
        "csrc/": ["a.c", "c.h", "d.c", "e/f.c"],
        "src/springsim/": ["viewer/static/x.js"],
    }


def test_every_source_file_is_in_the_map_and_every_file_in_it_exists():
    tables = map_tables(ARCHITECTURE.read_text())
    assert set(tables) == set(TREES), f"tables for {sorted(tables)}, expected {sorted(TREES)}"
    problems = []
    for folder, names in tables.items():
        repeated = sorted({n for n in names if names.count(n) > 1})
        problems += [f"{folder}{n} is named twice" for n in repeated]
        named = set(names)
        present = tree_files(folder)
        problems += [f"{folder}{n} is not in the map" for n in sorted(present - named)]
        problems += [
            f"{folder}{n} is in the map but not a file"
            for n in sorted(named)
            if not (ROOT / folder / n).is_file()
        ]
    assert not problems, "docs/architecture.md's file tables:\n" + "\n".join(problems)
