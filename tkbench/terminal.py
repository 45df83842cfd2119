"""Tables printed to the terminal keep the names one must type (datasets, methods, families) whole.

rich shrinks a table to the terminal's width by cutting cells with an ellipsis; a cut ``breast_canc…`` cannot be
copied into ``--only``. :func:`keep_whole` gives the name columns their full width (``min_width``) and lets the
other columns wrap; on a terminal too narrow even for the names they fold onto a second line, never lose letters.
"""
from __future__ import annotations

from rich.table import Table
from rich.text import Text


def keep_whole(table: Table, *headers: str) -> Table:
    """Call after the rows are added: the columns named ``headers`` are never truncated."""
    for column in table.columns:
        if str(column.header) in headers:
            cells = [Text.from_markup(c).plain if isinstance(c, str) else str(c) for c in column.cells]
            column.min_width = max([len(str(column.header)), *map(len, cells)])
            column.no_wrap = True
            column.overflow = "fold"
    return table
