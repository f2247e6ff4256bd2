"""The model a System describes, and how it is edited: its arrays (``arrays``: the
zero-copy views), its topology (``topology``: nodes, springs, faces, tearing) and its
pins and drives (``pins``).
"""
