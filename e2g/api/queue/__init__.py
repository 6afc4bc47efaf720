"""The patch queue (issue 35): every patch on the list with its state, derived.

`states` holds the rules (the one home of each state's definition), `lifecycle` the
facts of one patch version they read, `refresh` what ingest, match and sync call to
keep the queue and record its events, `listing` what `e2g patches`, `e2g events`,
the web pages and feeds read.
"""
