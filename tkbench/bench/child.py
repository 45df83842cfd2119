"""Entry point of an isolated run in a fresh interpreter: ``python -m tkbench.bench.child PAYLOAD.json``."""
import sys

from tkbench.bench.isolation import _subprocess_entry

if __name__ == "__main__":
    _subprocess_entry(sys.argv[1])
