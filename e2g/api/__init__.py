"""The Python API that the CLI and the web layer call.

Each function takes resolved Settings and plain values, does one job, and returns
model or result objects; nothing here prints or exits, and nothing here shapes JSON or
SVG (that is `e2g.render`, above this package). Split by job: `core` (ingest,
reindex, optimize, search, counts), `threads` (messages and discussions), `link` (commits and
matching; the worker processes are `e2g.matcher.batch`), `stats` (coverage). Callers
import the submodule they need (`from e2g.api import core`), so that `e2g search`
does not pay for the git reader and the matcher at start-up.
"""
