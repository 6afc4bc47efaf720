"""The rules of mail: pure functions from bytes or text to `e2g.model` values.

Headers and Message-IDs, dates, subjects, trailers, diffs and patch ids, pull
requests, and `message.parse_message` that joins them (RawMessage -> Message). Nothing
here reads files, runs processes or touches the store.
"""
