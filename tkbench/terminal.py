"""Tables printed to the terminal keep the names one must type (datasets, methods, families) whole.

rich shrinks a table to the terminal's width by cutting cells with an ellipsis; a cut ``breast_canc…`` cannot be
copied into ``--only``. :func:`keep_whole` gives the name columns their full width (``min_width``) and lets the
other columns wrap; on a terminal too narrow even for the names they fold onto a second line, never lose letters.
"""
from __future__ import annotations

import os
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

PIPE_WIDTH = 160  # the width of tables sent to a pipe or file (no terminal to fit), unless COLUMNS says otherwise


def make_console(stderr: bool = False) -> Console:
    """A console for the command line. On a terminal: rich's own (its width, its wrapping). Sent to a pipe or a
    file (a log, ``| less``, CI), rich would assume 80 columns and wrap every line there, mid-phrase: lines are
    then never wrapped (``soft_wrap``) and tables are laid out on :data:`PIPE_WIDTH` columns (or ``COLUMNS``)."""
    stream = sys.stderr if stderr else sys.stdout
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if tty:
        return Console(stderr=stderr)
    try:
        width = int(os.environ.get("COLUMNS", "")) or PIPE_WIDTH
    except ValueError:
        width = PIPE_WIDTH
    return Console(stderr=stderr, width=width, soft_wrap=True)


def keep_whole(table: Table, *headers: str) -> Table:
    """Call after the rows are added: the columns named ``headers`` are never truncated, and no other column
    loses letters to an ellipsis either (a long word folds onto the next line instead)."""
    for column in table.columns:
        column.overflow = "fold"
        if str(column.header) in headers:
            cells = [Text.from_markup(c).plain if isinstance(c, str) else str(c) for c in column.cells]
            column.min_width = max([len(str(column.header)), *map(len, cells)])
            column.no_wrap = True
            column.overflow = "fold"
    return table
