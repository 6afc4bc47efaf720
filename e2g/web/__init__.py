"""The read-only web page and REST API behind `e2g serve` (extra `web`: FastAPI + Jinja2).

`create_app(settings, repo=...)` in `e2g.web.app` builds the ASGI application. Nothing
here writes to the store, and every byte that came from mail is escaped on output.
"""
