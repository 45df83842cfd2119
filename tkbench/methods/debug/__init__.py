"""Hidden families for the tests of the run machinery (sleeping, crashing, spawning runs)."""
ESTIMATORS = ()
