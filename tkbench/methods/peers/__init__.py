"""Peers: the systems a user would pick instead of tkbench's families, as methods of the same config (issue 51).
Behind the optional extra ``pip install -e '.[peers]'``; never required (:func:`tkbench.methods.peers.imports.need`
names the extra when one is missing)."""
ESTIMATORS = ()
