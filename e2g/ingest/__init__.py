"""The ingest job: `pipeline` (archives -> parse workers -> store writer -> index
child), `indexing` (the full-text index following the store) and `processes` (how
worker processes start). The rules of mail live in `e2g.mail`, the readers in
`e2g.archives`; this package only runs them and writes what they give.
"""
